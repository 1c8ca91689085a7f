import { sharedDatabases, type SharedDatabase } from '../support/shared-database';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../support/fake-anthropic';
import { runInProcessWorker, spawnWorkerProcess, startTemporalTestEnv, uniqueTaskQueue, type TemporalTestEnv, type WorkerProcess } from '../support/temporal';
import { testDeps } from '../support/keel-deps';
import { goodSummarizer, seedSession, startCompaction } from './support';
import { openStore, type Store } from '../../src/store/connect';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { getSession } from '../../src/store/sessions-repo';
import { getCompaction } from '../../src/store/compactions-repo';
import { allEntries, countCompactionEntries } from '../support/store-readers';

let env: TemporalTestEnv;
let fake: FakeAnthropic;

beforeAll(async () => {
  env = await startTemporalTestEnv();
});
afterAll(async () => {
  await env?.close();
});

describe.each(sharedDatabases())('a worker killed mid-compaction, on $name', (kind) => {
  let database: SharedDatabase;
  let store: Store;
  const processes: WorkerProcess[] = [];
  let stopInProcess: (() => Promise<void>) | undefined;

  beforeEach(async () => {
    fake = await startFakeAnthropic();
    database = await kind.open();
    store = await openStore({ kind: 'postgres', url: database.url, maxConnections: 2 });
  });
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((w) => w.kill()));
    await stopInProcess?.();
    stopInProcess = undefined;
    await store.close();
    await database.close();
    await fake.close();
  });

  it('resumes on another worker after SIGKILL during a chunk activity: one compaction entry, counters right, nothing lost', async () => {
    const taskQueue = uniqueTaskQueue('keel-compaction-crash');
    const s = await seedSession(store.db, 8);
    // The first summarizer call hangs (the worker dies while it is in flight); the retry is answered.
    fake.enqueue(fakeReply.text('never delivered', { delayMs: 60_000 }));
    fake.respondWith(goodSummarizer);
    const first = spawnWorkerProcess({ TEMPORAL_ADDRESS: env.server.address, DATABASE_URL: database.url, KEEL_TASK_QUEUE: taskQueue, ...fake.env });
    processes.push(first);
    await first.ready;

    const handle = await startCompaction(env, taskQueue, s, { summarizeHeartbeatTimeoutMs: 2_000 });
    await fake.waitForRequests(1, 60_000);
    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');

    stopInProcess = (await runInProcessWorker(env, taskQueue, testDeps(store, fake.url))).stop;
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'succeeded', degraded: false, firstKeptEntryId: 'm6' });
    expect(fake.requests).toHaveLength(2);
    expect(await countCompactionEntries(store.db, s.agentId, s.sessionId)).toBe(1);
    const session = await getSession(store.db, s.agentId, s.sessionKey);
    expect(session).toMatchObject({ compaction_count: 1, context_tokens: result.tokensAfter, compaction_failures: 0 });
    expect(await getCompaction(store.db, result.compactionId)).toMatchObject({ status: 'succeeded', attempts: 1 });
    // Non-destructive: every message is still stored, and the active window is the summary plus the kept tail.
    const all = await allEntries(store.db, s.agentId, s.sessionId);
    expect(all.filter((e) => e.type === 'message').map((e) => e.id)).toEqual(s.entryIds);
    const active = await loadActiveEntries(store.db, s.agentId, s.sessionId);
    expect(active.rows.map((r) => r.id)).toEqual(['m6', 'm7']);
    expect(active.compaction!.summary).toContain('/srv/app/module-0.ts');
    fake.assertScriptConsumed();
  });
});
