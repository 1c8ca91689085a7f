import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keel } from '../support/keel-cli';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../support/fake-anthropic';
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
  const noModel = { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined };

  it('dev --check without a model starts and stops the embedded stack, says how to set one, exits 0', async () => {
    const run = await keel(['dev', '--check'], { ...noModel, KEEL_HOME: home });
    expect(run.stderr).toContain('export ANTHROPIC_API_KEY=');
    expect(run.stderr).toContain('ANTHROPIC_BASE_URL');
    expect(run.stderr).toMatch(/store: PGlite in .*keel-cli-/);
    expect(run.stderr).toContain('stopped cleanly');
    expect(run.code).toBe(0);
  });

  it('dev chats through a durable turn on the embedded stack', async () => {
    fake.enqueue(fakeReply.text('Hello from the embedded stack'));
    const run = await keel(['dev', '--session', 'agent:cli:main'], { ...noModel, KEEL_HOME: home, ...fake.env }, 'hi there\n/quit\n');
    expect(run.stdout).toContain('keel › Hello from the embedded stack');
    expect(run.stderr).toMatch(/\[[█░]+\] [\d.]+% of 200k tokens/);
    // What the context is made of: system prompt, workspace files, tool definitions, history.
    expect(run.stderr).toMatch(/\[[SWTH·]+\] system [\d.]+k · workspace 0\.0k · tools [\d.]+k · history [\d.]+k of 200k/);
    // The model got the system prompt.
    expect(JSON.stringify(fake.requests.at(-1)!.body.system)).toContain('## Runtime');
    expect(run.code).toBe(0);
    fake.assertScriptConsumed();
  });

  it("dev's chat refuses an agent outside KEEL_ALLOWED_AGENTS before anything is sent, as every other client does", async () => {
    const before = fake.requests.length;
    const run = await keel(['dev', '--session', 'agent:cli:main'], { ...noModel, KEEL_HOME: home, KEEL_ALLOWED_AGENTS: 'ops', ...fake.env }, 'hi there\n/quit\n');
    expect(`${run.stdout}${run.stderr}`).toContain('agent cli is not in KEEL_ALLOWED_AGENTS (ops); nothing was written');
    expect(fake.requests.length).toBe(before);
  });

  it('imports a folder with progress, exports a session back to the same JSONL, and reports maintenance as JSON', async () => {
    const corpus = await writeCorpus(join(home, 'sessions'), { seed: 7, sessions: 3, entriesPerSession: 40, agentId: 'ops' });
    const env = { ...noModel, KEEL_HOME: home };
    const imported = await keel(['import', join(home, 'sessions'), '--agent', 'ops', '--json'], env);
    expect(imported.code).toBe(0);
    expect(imported.stderr).toMatch(/3\/3 files/);
    expect(JSON.parse(imported.stdout).totals).toMatchObject({ files: 3, failed: 0 });

    const out = join(home, 'export.jsonl');
    const exported = await keel(['export', corpus.sessionKeys[0]!, '--agent', 'ops', '--out', out], env);
    expect(exported.code).toBe(0);
    const original = (await readFile(corpus.files[0]!, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    const roundTrip = (await readFile(out, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
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
