/**
 * `keel dev` in a real pseudo-terminal (tmux), driven by keys as a newcomer would: an unreachable
 * model is named on one line and never traps the user (Ctrl-C cancels the turn, a second Ctrl-C
 * stops everything and leaves no process or file behind); the chat's own commands, tool calls, and
 * a subagent's report appearing without input.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startFakeAnthropic, fakeReply, type FakeAnthropic, type FakeRequest } from '../../src/testing';
import { EXITED, keelInTerminal, type Terminal } from '../support/tmux-terminal';
import { isFlushRequest, isSummarizerRequest } from '../support/durable-turn-helpers';
import { messageText } from '../subagents/subagent-script';
import { processAlive } from '../../src/embedded/stack-state';
import { tmuxPath } from '../support/tool-path';

const PROMPT = /you › $/m;
const TOOLS_MODULE = resolve(__dirname, '../support/cli-test-tools.ts');

/** The stack's pids while it runs: the keel process and its Temporal dev server. */
function stackPids(home: string): number[] {
  const state = JSON.parse(readFileSync(join(home, 'stack.json'), 'utf8')) as { pid: number; temporalPid?: number };
  expect(state.temporalPid).toEqual(expect.any(Number));
  return [state.pid, state.temporalPid!];
}

/** Once the chat has left: exit 0, every process of the stack gone, no stack or owner file. */
async function expectStoppedClean(term: Terminal, home: string, pids: number[]): Promise<void> {
  const shown = await term.waitFor(EXITED, { timeoutMs: 30_000 });
  expect(EXITED.exec(shown)![1]).toBe('0');
  for (const pid of pids) expect(processAlive(pid)).toBe(false);
  expect(existsSync(join(home, 'stack.json'))).toBe(false);
  expect(existsSync(join(home, 'db.owner'))).toBe(false);
}

/** The text of each user message a request carried (tool results left out: they hold what a tool read). */
const userTexts = (r: FakeRequest) =>
  (r.body.messages ?? [])
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : (m.content as Array<{ type: string; text?: string }>)
            .map((b) => (b.type === 'text' ? (b.text ?? '') : ''))
            .join(' '),
    );

// Without tmux the suite is skipped; test/support/report-skips.ts says so at the start (.ci/run installs it).
(tmuxPath() ? describe : describe.skip)('keel dev at a terminal', () => {
  let fake: FakeAnthropic;
  let dir: string;
  const terminals: Terminal[] = [];
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    dir = await mkdtemp(join(tmpdir(), 'keel-dev-terminal-'));
  });
  afterEach(() => {
    for (const term of terminals.splice(0)) term.close();
  });
  afterAll(async () => {
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  const start = async (name: string, env: Record<string, string | undefined>) => {
    const home = join(dir, name, '.keel');
    const term = keelInTerminal(
      name,
      ['dev', '--session', 'agent:main:main'],
      { DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined, KEEL_HOME: home, ...env },
      dir,
    );
    terminals.push(term);
    await term.waitFor(PROMPT, { timeoutMs: 120_000 });
    return { term, home, pids: stackPids(home) };
  };

  it('names an unreachable model on one line; Ctrl-C cancels the turn, a second Ctrl-C stops everything', async () => {
    const { term, home, pids } = await start('unreachable', {
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      ANTHROPIC_API_KEY: 'sk-ant-test',
    });
    term.line('hello');
    const retrying = await term.waitFor(
      /model unreachable at http:\/\/127\.0\.0\.1:9 \(ANTHROPIC_BASE_URL\).*retrying — Ctrl-C to cancel/,
    );
    // The worker's log lines go to the log file, never over the chat.
    expect(retrying).not.toMatch(/Activity failed/);
    expect(readFileSync(join(home, 'logs', 'dev.log'), 'utf8')).toMatch(/Activity failed/);
    // Later attempts redraw that line in place: the screen shows the newest, not a scroll of them.
    await term.waitFor(/attempt [3-9][^\n]*retrying — Ctrl-C to cancel/);
    expect(term.screen().match(/retrying — Ctrl-C to cancel/g)).toHaveLength(1);

    // Measured up to the line typed: the retry line below it is erased when the cancel is said.
    const before = term.screen().lastIndexOf('you › hello');
    term.keys('C-c');
    await term.waitFor(/turn cancelled[^\n]*\n(.*\n)*you › $/m, { after: before });
    // Back at the prompt, the stack still runs.
    for (const pid of pids) expect(processAlive(pid)).toBe(true);

    term.keys('C-c');
    await expectStoppedClean(term, home, pids);
  }, 240_000);

  it('shows each tool call as it runs, runs /help, /compact and /new itself, and shows a subagent’s report without input', async () => {
    fake.respondWith((r) => {
      const first = userTexts(r)[0] ?? '';
      const lastMessage = r.body.messages?.at(-1);
      const last = messageText(lastMessage);
      if (isSummarizerRequest(r)) return fakeReply.text('## Goal\nLook around and count with a helper.');
      if (isFlushRequest(r)) return fakeReply.text('NO_REPLY');
      if (first.startsWith('Count to three')) return fakeReply.text('one, two, three');
      const result = Array.isArray(lastMessage?.content)
        ? lastMessage.content.find((b: { type: string }) => b.type === 'tool_result')
        : undefined;
      // A second look, once the first call's line is on the screen: the turn is still running then.
      if (result?.tool_use_id === 'toolu_screen')
        return fakeReply.toolUse([{ id: 'toolu_seen', name: 'read_screen', input: { waitFor: '⚙ read_screen ok' } }]);
      if (result?.tool_use_id === 'toolu_seen')
        return fakeReply.text(
          JSON.stringify(result.content).includes('⚙ read_screen ok')
            ? 'Done, and the call showed while I worked.'
            : 'Done, but nothing showed yet.',
        );
      if (result) return fakeReply.text('Done.');
      if (last.includes('[Subagent')) return fakeReply.text('The helper counted to three.');
      if (last.includes('spawn a helper'))
        return fakeReply.toolUse([
          {
            id: 'toolu_spawn',
            name: 'sessions_spawn',
            input: { task: 'Count to three and report.', label: 'counter' },
          },
        ]);
      if (last.includes('what now?')) return fakeReply.text('A fresh start.');
      if (last.includes('look around'))
        return fakeReply.toolUse([{ id: 'toolu_screen', name: 'read_screen', input: { waitFor: 'look around' } }]);
      return undefined;
    });
    const { term, home, pids } = await start('commands', { ...fake.env, KEEL_TOOLS_MODULE: TOOLS_MODULE });

    term.line('/help');
    await term.waitFor(/\/compact \[instructions\]/);

    // Each tool call is shown as it runs, before the reply: the second call read the first one's line.
    let before = term.screen().length;
    term.line('look around');
    const looked = await term.waitFor(/keel › Done, (.*)\n(.*\n)*you › $/m, { after: before });
    const turn = looked.slice(looked.lastIndexOf('look around'));
    expect(turn).toMatch(
      /⚙ read_screen ok\n(.*\n)*.*⚙ read_screen ok\n(.*\n)*keel › Done, and the call showed while I worked\./,
    );
    // The turn's result lists the calls the stream showed: none is printed twice.
    expect(turn.match(/⚙ read_screen ok/g)).toHaveLength(2);

    before = term.screen().length;
    term.line('spawn a helper');
    await term.waitFor(/⚙ sessions_spawn ok\n(.*\n)*you › $/m, { after: before });
    // Nothing typed since: the parent's reply to the subagent's announce appears on its own.
    await term.waitFor(/subagent [0-9a-f]{8} reported back\nkeel › The helper counted to three\./, {
      after: before,
      timeoutMs: 90_000,
    });

    before = term.screen().length;
    term.line('/compact keep the counting');
    // The context as /status counts it, then the same figure's bar; and whose summary it is.
    await term.waitFor(
      /compaction succeeded: context [\d,]+ → [\d,]+ tokens, as \/status counts it \(history \d[\d,]* → \d[\d,]*\); the summary is the model’s\n\[[█░]+\] [\d.]+% of 200k tokens/,
      { after: before, timeoutMs: 90_000 },
    );

    before = term.screen().length;
    term.line('/new what now?');
    // The new session is said before its first reply.
    await term.waitFor(/started a new session for agent:main:main: .*\n(.*\n)*keel › A fresh start\./, {
      after: before,
    });

    // What reached the model: never the chat's own commands as a message; the summarizer got the instructions.
    const sent = fake.requests.filter((r) => !isSummarizerRequest(r)).flatMap(userTexts);
    for (const command of ['/help', '/compact', '/new']) expect(sent.filter((t) => t.includes(command))).toEqual([]);
    expect(
      fake.requests.some((r) => isSummarizerRequest(r) && JSON.stringify(r.body).includes('keep the counting')),
    ).toBe(true);

    term.keys('C-d');
    await expectStoppedClean(term, home, pids);
    fake.assertScriptConsumed();
  }, 300_000);
  it('cancels a reply mid-stream so the next request carries none of it, stops cleanly on Ctrl-C Ctrl-C while a local model streams, and says its 2k window is too small', async () => {
    const local = await startFakeAnthropic();
    try {
      // A slow local model: the reply is still streaming when the user cancels it, and when they leave.
      // (Summaries and memory flushes between the turns are answered at once.)
      local.respondWith((r) =>
        userTexts(r).at(-1)?.includes('long story')
          ? fakeReply.text('a long and slow reply '.repeat(40), { eventDelayMs: 200 })
          : fakeReply.text('here is the next answer'),
      );
      const config = join(dir, 'local-keel.config.json');
      writeFileSync(
        config,
        JSON.stringify({
          model: { provider: 'openai-compatible', id: 'gemma-local', baseUrl: `${local.url}/v1` },
          contextTokens: 2_048,
        }),
      );
      const { term, home, pids } = await start('local', { KEEL_CONFIG: config });
      expect(term.screen()).toMatch(/main: window 2,048 tokens is too small for a model summary/);
      // Ctrl-C mid-reply: the turn is cancelled, and the next request carries none of it.
      let before = term.screen().length;
      term.line('tell me a long story');
      await term.waitFor(/keel › a long and slow reply/, { after: before, timeoutMs: 60_000 });
      term.keys('C-c');
      await term.waitFor(/turn cancelled: .*left out of the conversation/, { after: before, timeoutMs: 60_000 });
      await term.waitFor(PROMPT, { after: before, timeoutMs: 30_000 });
      before = term.screen().length;
      const sent = local.requests.length;
      term.line('and now?');
      await term.waitFor(/keel › here is the next answer/, { after: before, timeoutMs: 60_000 });
      const next = local.requests.slice(sent).find((r) => userTexts(r).at(-1)?.includes('and now?'));
      expect(next).toBeDefined();
      expect(JSON.stringify(next!.body.messages)).not.toMatch(/a long and slow reply|tell me a long story/);
      // Ctrl-C Ctrl-C while the next reply streams: everything stops.
      before = term.screen().length;
      term.line('tell me another long story');
      await term.waitFor(/keel › a long and slow reply/, { after: before, timeoutMs: 60_000 });
      term.keys('C-c');
      term.keys('C-c');
      await expectStoppedClean(term, home, pids);
      const shown = term.screen();
      expect(shown).toMatch(/stopped cleanly/);
      expect(shown).not.toMatch(/Channel has been shut down\n\s+at /);
      // The abandoned turn's call ended before the connection closed, not with it.
      expect(shown).not.toMatch(/a call still in flight ended with the connection/);
      expect(local.requests.every((r) => r.path === '/v1/chat/completions')).toBe(true);
    } finally {
      await local.close();
    }
  }, 240_000);
});
