import { renderSpawnTask, sessionsSpawnInput } from '../../src/subagents/spawn-input';
import { spawnNotAllowed } from '../../src/subagents/allow-agents';
import { announceText } from '../../src/subagents/announce-text';
import { DEFAULTS } from '../../src/config/defaults';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveSpawnFiles } from '../../activities/parts/spawn-attachments';

/** A 1×1 PNG: its signature and chunks hold bytes that are not UTF-8. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('sessions_spawn input', () => {
  it('renders attachments (utf8 and base64) after the task, as fenced blocks', () => {
    const input = sessionsSpawnInput.parse({
      task: 'Review these',
      attachments: [
        { name: 'a.txt', content: 'alpha' },
        { name: 'b.md', content: Buffer.from('# beta').toString('base64'), encoding: 'base64' },
      ],
    });
    expect(renderSpawnTask(input, 'attachments/id1')).toEqual({
      text: 'Review these\n\nAttachment a.txt:\n```\nalpha\n```\n\nAttachment b.md:\n```\n# beta\n```',
      files: [],
    });
  });

  it('keeps a binary attachment byte for byte as a file, never decoded into the message', () => {
    const png = Buffer.from(PNG_BASE64, 'base64');
    const input = sessionsSpawnInput.parse({
      task: 'Describe the image',
      attachments: [{ name: 'dot.png', content: PNG_BASE64, encoding: 'base64' }],
    });
    const rendered = renderSpawnTask(input, 'attachments/id1');
    expect(rendered).toEqual({
      text: `Describe the image\n\nAttachment dot.png: binary, ${png.length} bytes (SHA-256 ${createHash('sha256').update(png).digest('hex')}), saved in your workspace as attachments/id1/dot.png`,
      files: [{ name: 'dot.png', path: 'attachments/id1/dot.png', bytes: png }],
    });
    expect((rendered as { text: string }).text).not.toContain('\uFFFD');
  });

  it('refuses a binary attachment whose name holds a folder', () => {
    const input = sessionsSpawnInput.parse({
      task: 'Describe the image',
      attachments: [{ name: '../../etc/dot.png', content: PNG_BASE64, encoding: 'base64' }],
    });
    expect(renderSpawnTask(input, 'attachments/id1')).toEqual({
      problem:
        'attachments: "../../etc/dot.png" is binary and saved as a file: name it without folders (e.g. "map.png")',
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
    expect(renderSpawnTask(input, 'attachments/id1')).toEqual({
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

describe('saveSpawnFiles', () => {
  const png = Buffer.from(PNG_BASE64, 'base64');
  const files = [{ name: 'dot.png', path: 'attachments/id1/dot.png', bytes: png }];
  const configOf = (config: { workspaceDir?: string; workspaceAccess?: 'rw' | 'ro' | 'none' }) => ({
    config: { workspaceAccess: 'rw' as const, ...config },
  });

  it('writes each file under the workspace, byte for byte', async () => {
    const workspaceDir = mkdtempSync(join(tmpdir(), 'keel-spawn-files-'));
    expect(await saveSpawnFiles(configOf({ workspaceDir }), 'main', files)).toBeUndefined();
    expect(readFileSync(join(workspaceDir, 'attachments/id1/dot.png')).equals(png)).toBe(true);
  });

  it.each([{ workspaceAccess: 'rw' as const }, { workspaceAccess: 'none' as const, workspaceDir: '/tmp' }])(
    'refuses, naming the setting, when the child has no workspace (dir $workspaceDir, access $workspaceAccess)',
    async (config) => {
      expect(await saveSpawnFiles(configOf(config), 'writer', files)).toBe(
        'attachments: dot.png is binary, saved as files in the subagent\'s workspace, and agent "writer" has none (set `workspace` for it, with workspaceAccess rw or ro); or attach text (utf8)',
      );
    },
  );
});
