import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keel, startKeel, type LiveKeel } from '../support/keel-cli';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../../src/testing';
import { writeCorpus } from '../fixtures/generate';
import { freePort } from '../../src/temporal/dev-server';

/**
 * `keel dev` owns its PGlite folder and serves it; every other `keel` process in the same KEEL_HOME
 * reaches the stack through `<home>/stack.json`, with no variables, and never opens the folder itself.
 */
describe('one embedded stack, one owner', () => {
  let fake: FakeAnthropic;
  let home: string;
  let dev: LiveKeel | undefined;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => fake.close());
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-owner-'));
  });
  afterEach(async () => {
    if (dev) {
      dev.signal('SIGKILL');
      await dev.exited;
      dev = undefined;
    }
  });
  const noVars = () => ({
    DATABASE_URL: undefined,
    TEMPORAL_ADDRESS: undefined,
    KEEL_TASK_QUEUE: undefined,
    KEEL_HOME: home,
    ...fake.env,
  });
  let firstRequest = 0;
  beforeEach(() => {
    firstRequest = fake.requests.length;
  });
  /** The last user message of each model request of this test. */
  const userTexts = () =>
    fake.requests.slice(firstRequest).map((r) => {
      const last = r.body.messages!.filter((m) => m.role === 'user').at(-1)!;
      return typeof last.content === 'string' ? last.content : last.content.map((b: any) => b.text ?? '').join('');
    });
  const entries = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);

  it('keeps every imported entry and the chat’s latest turns: status, import, export and a second worker and chat run next to dev', async () => {
    fake.enqueue(fakeReply.text('first reply'));
    dev = startKeel(['dev', '--session', 'agent:main:main'], noVars());
    await dev.waitFor('stderr', 'chat: session agent:main:main');
    const state = JSON.parse(await readFile(join(home, 'stack.json'), 'utf8'));
    expect(state).toMatchObject({ pid: dev.pid, dataDir: join(home, 'db') });
    expect(state.databaseUrl).toMatch(/^postgres:\/\/.*@127\.0\.0\.1:\d+\//);

    dev.write('hello owner\n');
    await dev.waitFor('stdout', 'keel › first reply');

    // A second process imports while dev runs: through dev's socket, into dev's pages. Three sessions of
    // two batches each: the import writes two files at once, each a transaction, over two connections.
    const corpus = await writeCorpus(join(home, 'import'), {
      seed: 17,
      sessions: 3,
      entriesPerSession: 600,
      agentId: 'main',
    }); // 601 entries each with the session header
    const imported = await keel(['import', join(home, 'import'), '--agent', 'main', '--json'], noVars());
    expect(imported.stderr).not.toContain('is open in process'); // never a second opener
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout).totals).toMatchObject({ files: 3, failed: 0, entries: 3 * 601 });

    // status finds the Temporal server through stack.json (no TEMPORAL_ADDRESS).
    const status = await keel(['status', 'agent:main:main', '--json'], noVars());
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ turnsCompleted: 1 });

    // A second worker and a second chat on their own task queue: both find the stack, the turn's rows land in dev's database.
    const queue = { KEEL_TASK_QUEUE: 'owner-second-worker' };
    const worker = startKeel(['worker'], { ...noVars(), ...queue });
    try {
      await worker.waitFor('stderr', 'keel worker: polling owner-second-worker');
      fake.enqueue(fakeReply.text('reply through the second worker'));
      const chat = await keel(['chat', 'agent:main:side'], { ...noVars(), ...queue }, 'from another terminal\n');
      expect(chat.code).toBe(0);
      expect(chat.stdout).toContain('keel › reply through the second worker');
      expect(chat.stderr).toContain(`chatting with the embedded stack of process ${dev.pid}`);
    } finally {
      worker.signal('SIGINT');
    }
    expect((await worker.exited).code).toBe(0);

    // The chat goes on; export in another process sees its latest turn while dev runs.
    fake.enqueue(fakeReply.text('second reply'));
    dev.write('and again\n');
    await dev.waitFor('stdout', 'keel › second reply');
    const whileRunning = await keel(['export', 'agent:main:main', '--agent', 'main'], noVars());
    expect(whileRunning.code).toBe(0);
    expect(whileRunning.stdout).toContain('and again');
    expect(whileRunning.stdout).toContain('second reply');
    const side = await keel(['export', 'agent:main:side', '--agent', 'main'], noVars());
    expect(side.stdout).toContain('reply through the second worker');

    const run = await dev.end();
    dev = undefined;
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('stopped cleanly');
    expect(existsSync(join(home, 'stack.json'))).toBe(false);
    expect(existsSync(join(home, 'db.owner'))).toBe(false);

    // After dev has closed, the folder opened directly holds every imported entry and both turns.
    const out = join(home, 'after.jsonl');
    const after = await keel(['export', corpus.sessionKeys[0]!, '--agent', 'main', '--out', out], noVars());
    expect(after.code).toBe(0);
    const exportedEntries = entries(await readFile(out, 'utf8'));
    expect(exportedEntries).toHaveLength(601);
    // The header also carries the key (so an import without sessions.json restores the session).
    const [header, ...rest] = entries(await readFile(corpus.files[0]!, 'utf8')) as Array<Record<string, unknown>>;
    expect(exportedEntries).toEqual([{ ...header, sessionKey: corpus.sessionKeys[0] }, ...rest]);
    const chatAfter = await keel(['export', 'agent:main:main', '--agent', 'main'], noVars());
    expect(chatAfter.stdout).toContain('second reply');
    expect(userTexts()).toEqual(['hello owner', 'from another terminal', 'and again']);
  }, 300_000);

  it('answers piped lines in order and exits after the last reply', async () => {
    fake.enqueue(fakeReply.text('reply a'), fakeReply.text('reply b'), fakeReply.text('reply c'));
    const run = await keel(['dev'], noVars(), 'a\nb\nc\n');
    expect(run.code).toBe(0);
    expect(userTexts()).toEqual(['a', 'b', 'c']);
    expect(run.stdout.match(/keel › reply [abc]/g)).toEqual(['keel › reply a', 'keel › reply b', 'keel › reply c']);
    expect(run.stderr).toContain('stopped cleanly');
    fake.assertScriptConsumed();
  }, 180_000);

  it('refuses a folder whose live owner does not answer, naming the process; a stale owner is taken over', async () => {
    const dataDir = join(home, 'db');
    const closedPort = await freePort();
    const owner = (pid: number) => ({
      pid,
      startedAt: new Date().toISOString(),
      temporalAddress: '127.0.0.1:1',
      databaseUrl: `postgres://postgres:postgres@127.0.0.1:${closedPort}/postgres`,
      dataDir,
    });
    // This test process stands in for a live owner whose socket is gone.
    await writeFile(join(home, 'stack.json'), JSON.stringify(owner(process.pid)));
    await writeFile(`${dataDir}.owner`, JSON.stringify({ pid: process.pid, since: 'earlier' }));
    const exported = await keel(['export', 'agent:main:main', '--agent', 'main'], noVars());
    expect(exported.code).toBe(1);
    expect(exported.stderr).toContain(
      `the embedded stack in process ${process.pid} owns ${dataDir}, but its database at postgres://127.0.0.1:${closedPort}/postgres does not answer`,
    );
    const secondDev = await keel(['dev', '--check'], noVars());
    expect(secondDev.code).toBe(1);
    expect(secondDev.stderr).toContain(`an embedded stack already runs in process ${process.pid}`);

    // Without a state file the folder's owner mark alone refuses a second opener.
    await writeFile(join(home, 'stack.json'), '');
    const migrate = await keel(['migrate'], noVars());
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toContain(`the PGlite folder ${dataDir} is open in process ${process.pid} (since earlier)`);

    // A dead owner: its folder and state are taken over.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    await writeFile(join(home, 'stack.json'), JSON.stringify(owner(dead)));
    await writeFile(`${dataDir}.owner`, JSON.stringify({ pid: dead, since: 'earlier' }));
    await writeCorpus(join(home, 'import'), { seed: 5, sessions: 1, entriesPerSession: 5, agentId: 'main' });
    const imported = await keel(['import', join(home, 'import'), '--agent', 'main', '--json'], noVars());
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout).totals).toMatchObject({ entries: 6, failed: 0 });
    expect(existsSync(`${dataDir}.owner`)).toBe(false);
  }, 180_000);
});
