import { renderSpawnTask, sessionsSpawnInput } from '../../src/subagents/spawn-input';
import { spawnNotAllowed } from '../../src/subagents/allow-agents';
import { announceText } from '../../src/subagents/announce-text';
import { DEFAULTS } from '../../src/config/defaults';

describe('sessions_spawn input', () => {
  it('renders attachments (utf8 and base64) after the task, as fenced blocks', () => {
    const input = sessionsSpawnInput.parse({
      task: 'Review these',
      attachments: [
        { name: 'a.txt', content: 'alpha' },
        { name: 'b.md', content: Buffer.from('# beta').toString('base64'), encoding: 'base64' },
      ],
    });
    expect(renderSpawnTask(input)).toEqual({
      text: 'Review these\n\nAttachment a.txt:\n```\nalpha\n```\n\nAttachment b.md:\n```\n# beta\n```',
    });
  });

  it('names the field and the fix for bad input', () => {
    const bad = sessionsSpawnInput.safeParse({ task: '  ', mode: 'forever' });
    expect(bad.success).toBe(false);
    const messages = bad.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(messages).toContain('task: describe the task in detail: the subagent knows only what this says');
    expect(messages).toContain('mode: use "run" (one task, then it ends) or "session" (stays, takes more messages)');
  });

  it('refuses a task and attachments over the bound, saying what to do instead', () => {
    const input = sessionsSpawnInput.parse({
      task: 'x',
      attachments: [{ name: 'big', content: 'y'.repeat(DEFAULTS.subagentTaskChars) }],
    });
    expect(renderSpawnTask(input)).toEqual({
      problem: expect.stringContaining('point the subagent at files in the workspace instead'),
    });
  });
});

describe('announce text', () => {
  it('bounds the result and points at the full transcript', () => {
    const text = announceText({
      subagentId: 'id1',
      label: 'Oslo',
      childSessionKey: 'agent:main:subagent:x',
      mode: 'run',
      outcome: 'done',
      parts: [{ title: 'Answer to the task', text: 'z'.repeat(DEFAULTS.subagentAnnounceChars + 500) }],
    });
    expect(text.split('\n')[0]).toBe('[Subagent "Oslo" (id1) finished · mode run]');
    expect(text).toContain("… [500 more characters in the child's transcript]");
    expect(text).toContain('sessions_history with sessionKey "agent:main:subagent:x"');
    expect(text.length).toBeLessThan(DEFAULTS.subagentAnnounceChars + 300);
    // One answer reads as the answer alone.
    expect(text).not.toContain('Answer to the task');
  });

  it('tells a run of several answers in order, each titled and cut at its share of the bound', () => {
    const long = 'y'.repeat(DEFAULTS.subagentAnnounceChars);
    const text = announceText({
      subagentId: 'id1',
      label: null,
      childSessionKey: 'agent:main:subagent:x',
      mode: 'run',
      outcome: 'done',
      parts: [
        { title: 'Answer to the task', text: 'Oslo has 700k people.' },
        { title: 'Answer to message 1 sent to it', text: long },
      ],
    });
    expect(text.split('\n').slice(0, 4)).toEqual([
      '[Subagent id1 finished · mode run]',
      'Answer to the task:',
      'Oslo has 700k people.',
      'Answer to message 1 sent to it:',
    ]);
    expect(text).toContain(
      `… [${DEFAULTS.subagentAnnounceChars - Math.floor(DEFAULTS.subagentAnnounceChars / 2)} more characters in the child's transcript]`,
    );
    expect(text.length).toBeLessThan(DEFAULTS.subagentAnnounceChars + 300);
  });
});

describe('spawnNotAllowed', () => {
  it.each([
    { allow: undefined, child: 'main', allowed: true },
    { allow: undefined, child: 'writer', allowed: false },
    { allow: [], child: 'writer', allowed: false },
    { allow: ['writer'], child: 'writer', allowed: true },
    { allow: ['writer'], child: 'coder', allowed: false },
    { allow: ['*'], child: 'coder', allowed: true },
  ])('agent main with $allow may spawn $child: $allowed', ({ allow, child, allowed }) => {
    const refusal = spawnNotAllowed(allow, 'main', child);
    expect(refusal === undefined).toBe(allowed);
    if (refusal) expect(refusal).toContain(`add "${child}" to subagentAllowAgents for agent "main"`);
  });
});
