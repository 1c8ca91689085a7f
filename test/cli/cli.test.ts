import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { keel, startKeel } from '../support/keel-cli';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../../src/testing';
import { writeCorpus } from '../fixtures/generate';

describe('keel command line', () => {
  let home: string;
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => fake.close());
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-cli-'));
  });
  const noModel = {
    ANTHROPIC_API_KEY: undefined,
    ANTHROPIC_BASE_URL: undefined,
    DATABASE_URL: undefined,
    TEMPORAL_ADDRESS: undefined,
  };

  it('dev --check without a model starts and stops the embedded stack, says how to set one, exits 0', async () => {
    const run = await keel(['dev', '--check'], { ...noModel, KEEL_HOME: home });
    expect(run.stderr).toContain('export ANTHROPIC_API_KEY=');
    expect(run.stderr).toContain('ANTHROPIC_BASE_URL');
    expect(run.stderr).toMatch(/store: PGlite in .*keel-cli-/);
    expect(run.stderr).toContain('stopped cleanly');
    expect(run.code).toBe(0);
  });

  it('dev --check makes one minimal request to the model and reports that it answered', async () => {
    fake.enqueue(fakeReply.text('p'));
    const before = fake.requests.length;
    const run = await keel(['dev', '--check'], {
      ...noModel,
      KEEL_HOME: home,
      ...fake.env,
      KEEL_MODEL: 'claude-check-model',
    });
    expect(run.stderr).toContain('check: stack started; the model (claude-check-model) answered; stopping');
    expect(run.code).toBe(0);
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ model: 'claude-check-model', max_tokens: 1, messages: [{ role: 'user' }] });
    fake.assertScriptConsumed();
  });

  it('dev --check with a model nobody listens for exits 1 with one line naming the address and its variable', async () => {
    const run = await keel(['dev', '--check'], {
      ...noModel,
      KEEL_HOME: home,
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      ANTHROPIC_API_KEY: 'sk-ant-test',
    });
    expect(run.stderr).toMatch(
      /^check: the model did not answer: model unreachable at http:\/\/127\.0\.0\.1:9 \(ANTHROPIC_BASE_URL\): .*$/m,
    );
    expect(run.stderr).toContain('stopped cleanly');
    expect(run.code).toBe(1);
  });

  it('dev with piped input: SIGINT cancels the retrying turn, a second SIGINT stops the stack and removes its files', async () => {
    const dev = startKeel(['dev'], {
      ...noModel,
      KEEL_HOME: home,
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      ANTHROPIC_API_KEY: 'sk-ant-test',
    });
    await dev.waitFor('stderr', 'chat: session');
    // Two lines piped ahead of the turn: a cancel drops them, so the second SIGINT finds the prompt and
    // leaves (had one of them started, that SIGINT would only cancel it and the stack would stay up).
    dev.write('hello\nsecond\nthird\n');
    await dev.waitFor(
      'stderr',
      /model unreachable at http:\/\/127\.0\.0\.1:9 \(ANTHROPIC_BASE_URL\).*; attempt 2, (next try in \d+ s|trying now), (\d+ min )?\d+ s of the retry budget left; retrying — Ctrl-C to cancel/,
    );
    // The line comes again at the next attempt: the wait never goes quiet.
    await dev.waitFor('stderr', /; attempt 3, /);
    dev.signal('SIGINT');
    await dev.waitFor('stderr', 'cancelling the turn…; 2 lines typed ahead dropped (Ctrl-C again leaves)');
    await dev.waitFor('stderr', 'turn cancelled');
    dev.signal('SIGINT');
    const run = await dev.exited;
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('stopped cleanly');
    expect(existsSync(join(home, 'stack.json'))).toBe(false);
    expect(existsSync(join(home, 'db.owner'))).toBe(false);
  });

  it('dev chats through a durable turn on the embedded stack', async () => {
    fake.enqueue(fakeReply.text('Hello from the embedded stack'));
    const run = await keel(
      ['dev', '--session', 'agent:cli:main'],
      { ...noModel, KEEL_HOME: home, ...fake.env },
      'hi there\n/quit\n',
    );
    expect(run.stdout).toContain('keel › Hello from the embedded stack');
    expect(run.stderr).toMatch(/\[[█░]+\] [\d.]+% of 200k tokens/);
    // What the context is made of: system prompt, workspace files, tool definitions, history.
    expect(run.stderr).toMatch(
      /\[[SWTH·]+\] system [\d.]+k · workspace 0\.0k · tools [\d.]+k · history [\d.]+k of 200k/,
    );
    // The model got the system prompt.
    expect(JSON.stringify(fake.requests.at(-1)!.body.system)).toContain('## Runtime');
    expect(run.code).toBe(0);
    fake.assertScriptConsumed();
  });

  it("dev's chat refuses an agent outside KEEL_ALLOWED_AGENTS before anything is sent, as every other client does", async () => {
    const before = fake.requests.length;
    const run = await keel(
      ['dev', '--session', 'agent:cli:main'],
      { ...noModel, KEEL_HOME: home, KEEL_ALLOWED_AGENTS: 'ops', ...fake.env },
      'hi there\n/quit\n',
    );
    expect(`${run.stdout}${run.stderr}`).toContain(
      'agent cli is not in KEEL_ALLOWED_AGENTS (ops); nothing was written',
    );
    expect(fake.requests.length).toBe(before);
  });

  it('imports a folder with progress, exports a session back to the same JSONL, and reports maintenance as JSON', async () => {
    const corpus = await writeCorpus(join(home, 'sessions'), {
      seed: 7,
      sessions: 3,
      entriesPerSession: 40,
      agentId: 'ops',
    });
    const env = { ...noModel, KEEL_HOME: home };
    const imported = await keel(['import', join(home, 'sessions'), '--agent', 'ops', '--json'], env);
    expect(imported.code).toBe(0);
    expect(imported.stderr).toMatch(/3\/3 files/);
    expect(JSON.parse(imported.stdout).totals).toMatchObject({ files: 3, failed: 0 });

    const out = join(home, 'export.jsonl');
    const exported = await keel(['export', corpus.sessionKeys[0]!, '--agent', 'ops', '--out', out], env);
    expect(exported.code).toBe(0);
    const original = (await readFile(corpus.files[0]!, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const roundTrip = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // The same entries; the header also carries the key, so an import without sessions.json restores the session.
    expect(roundTrip).toEqual([{ ...original[0], sessionKey: corpus.sessionKeys[0] }, ...original.slice(1)]);

    const maintenance = await keel(['maintenance', '--json', '--prune-days', '1'], env);
    expect(maintenance.code).toBe(0);
    const report = JSON.parse(maintenance.stdout);
    expect(report.mode).toBe('warn');
    expect(report.sessionsPruned).toHaveLength(3);
  });

  it('exits 2 with the fix on bad usage', async () => {
    const run = await keel(['maintenance', '--prune-days', 'soon'], { ...noModel, KEEL_HOME: home });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--prune-days must be a number');
    const status = await keel(['status', 'agent:main:main'], { ...noModel, KEEL_HOME: home });
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('set TEMPORAL_ADDRESS');
  });
});
