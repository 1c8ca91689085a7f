import { sharedDatabases, type SharedDatabase } from '../support/shared-database';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../support/fake-anthropic';
import { keelClient, spawnWorkerProcess, startTemporalTestEnv, uniqueTaskQueue, type TemporalTestEnv, type WorkerProcess } from '../support/temporal';
import { openStore, type Store } from '../../src/store/connect';
import { getSession } from '../../src/store/sessions-repo';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

let env: TemporalTestEnv;
let fake: FakeAnthropic;

beforeAll(async () => {
  env = await startTemporalTestEnv();
});
afterAll(async () => {
  await env?.close();
});

describe.each(sharedDatabases())('a worker killed mid-turn, on $name', (kind) => {
  let database: SharedDatabase;
  let store: Store;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    fake = await startFakeAnthropic();
    database = await kind.open();
    store = await openStore({ kind: 'postgres', url: database.url, maxConnections: 2 });
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.kill()));
    await store.close();
    await database.close();
    await fake.close();
  });

  function startWorker(taskQueue: string): WorkerProcess {
    const worker = spawnWorkerProcess({
      TEMPORAL_ADDRESS: env.server.address,
      DATABASE_URL: database.url,
      KEEL_TASK_QUEUE: taskQueue,
      ...fake.env,
    });
    workers.push(worker);
    return worker;
  }

  it('lets a new worker finish the turn after SIGKILL during the model call, each entry stored once', async () => {
    const taskQueue = uniqueTaskQueue();
    const agent = `crash${Math.random().toString(36).slice(2, 8)}`;
    const key = `agent:${agent}:main`;
    // The first call hangs (the worker dies while it is in flight); the retry is answered.
    fake.enqueue(fakeReply.text('never delivered', { delayMs: 60_000 }), fakeReply.text('answered after the crash'));
    const first = startWorker(taskQueue);
    await first.ready;

    const client = keelClient(env, taskQueue, { modelHeartbeatTimeoutMs: 2_000 });
    const reply = client.sendMessage(key, 'survive this');
    await fake.waitForRequests(fake.requests.length + 1, 60_000);
    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = startWorker(taskQueue);
    await second.ready;
    const result = await reply;
    expect(result.reply).toBe('answered after the crash');

    const session = await getSession(store.db, agent, key);
    const entries = await allEntries(store.db, agent, session!.session_id);
    const messages = entries.map((e) => (e.payload as unknown as MessageEntry).message);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    fake.assertScriptConsumed();
  });
});
