/**
 * What every crash test needs: one real Temporal dev server per suite and, per test, a database
 * reachable by URL, the fake Anthropic server, worker processes to SIGKILL, and the stored transcript
 * of a session to check afterwards.
 *
 * @example
 *   const suite = crashSuite();
 *   describe.each(sharedDatabases())('a worker killed mid-turn, on $name', (kind) => {
 *     const rig = suite.rigPerTest(kind);
 *     it('finishes the turn', async () => {
 *       const first = await rig.startReadyWorker();
 *       const reply = rig.client().sendMessage(rig.sessionKey, 'hi');
 *       await first.kill('SIGKILL');
 *       await rig.startReadyWorker();
 *       await reply;
 *     });
 *   });
 */
import { resolve } from 'node:path';
import type { KeelClient } from '../../src/client/keel-client';
import type { SessionTuning } from '../../src/protocol';
import { openStore, type Store } from '../../src/store/connect';
import { getSession } from '../../src/store/sessions-repo';
import type { SessionRow } from '../../src/store/schema';
import { startFakeAnthropic, type FakeAnthropic } from '../../src/testing';
import { testDeps } from './keel-deps';
import type { SharedDatabase, SharedDatabaseKind } from './shared-database';
import {
  keelClient,
  runInProcessWorker,
  spawnWorkerProcess,
  startTemporalTestEnv,
  uniqueTaskQueue,
  type TemporalTestEnv,
  type WorkerProcess,
} from './temporal';
import { allEntries } from './store-readers';

/** Path of the tools module worker processes load (KEEL_TOOLS_MODULE). */
export const CRASH_TOOLS_MODULE = resolve(__dirname, 'crash-tools.ts');

export interface CrashRig {
  readonly fake: FakeAnthropic;
  readonly database: SharedDatabase;
  readonly store: Store;
  readonly taskQueue: string;
  /** TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE of the suite's Temporal, for a CLI process. */
  readonly temporalEnv: TemporalTestEnv['processEnv'];
  /** A fresh agent and its main session key: workflow ids never collide across tests. */
  readonly agentId: string;
  readonly sessionKey: string;
  /** Spawns `workers/main.ts` against this rig's database, fake and task queue, plus `extraEnv`. */
  startWorker(extraEnv?: Record<string, string>): WorkerProcess;
  /** `startWorker`, resolved once the worker polls its task queue. */
  startReadyWorker(extraEnv?: Record<string, string>): Promise<WorkerProcess>;
  /** Starts an in-process worker on the rig's task queue (a survivor that needs no process start). */
  startInProcessWorker(): Promise<void>;
  /** A client for the rig's task queue; `tuning` shortens heartbeat timeouts so a dead worker is noticed fast. */
  client(tuning?: SessionTuning): KeelClient;
  /** SIGKILLs every worker process still running, stops in-process workers and closes the rig. */
  close(): Promise<void>;
}

export interface CrashSuite {
  /**
   * A fresh rig on `kind` for each test (valid inside tests), closed after it. Declare a suite's own
   * afterEach (e.g. releasing table locks) before this call to run it while the rig is still open.
   */
  rigPerTest(kind: SharedDatabaseKind): CrashRig;
}

/**
 * Registers the suite's dev server (beforeAll/afterAll; skipped with the suite's tests) and returns the
 * rig factory. `envOptions`: how the dev server starts (e.g. dynamic config a suite needs).
 */
export function crashSuite(envOptions: Parameters<typeof startTemporalTestEnv>[0] = {}): CrashSuite {
  let env: TemporalTestEnv | undefined;
  beforeAll(async () => {
    env = await startTemporalTestEnv(envOptions);
  });
  afterAll(async () => {
    await env?.close();
  });
  return {
    rigPerTest(kind) {
      let current: CrashRig | undefined;
      beforeEach(async () => {
        if (!env) throw new Error("the crash suite's Temporal dev server is not started");
        current = await openCrashRig(env, kind);
      });
      afterEach(async () => {
        await current?.close();
        current = undefined;
      });
      const rig = (): CrashRig => {
        if (!current) throw new Error('the crash rig is open only inside a test');
        return current;
      };
      // Every property reads the current test's rig, so a suite can hold this one object across tests.
      return new Proxy({} as CrashRig, { get: (_target, property) => Reflect.get(rig(), property) });
    },
  };
}

async function openCrashRig(env: TemporalTestEnv, kind: SharedDatabaseKind): Promise<CrashRig> {
  const fake = await startFakeAnthropic();
  const database = await kind.open();
  const store = await openStore({ kind: 'postgres', url: database.url, maxConnections: 2 });
  const taskQueue = uniqueTaskQueue('keel-crash');
  const agentId = `crash${Math.random().toString(36).slice(2, 8)}`;
  const workers: WorkerProcess[] = [];
  const inProcess: Array<() => Promise<void>> = [];
  const startWorker = (extraEnv: Record<string, string> = {}): WorkerProcess => {
    const worker = spawnWorkerProcess({
      ...env.processEnv,
      DATABASE_URL: database.url,
      KEEL_TASK_QUEUE: taskQueue,
      // No daily reset: a run crossing the reset hour must not rotate the session mid-test.
      KEEL_RESET_MODE: 'none',
      ...fake.env,
      ...extraEnv,
    });
    workers.push(worker);
    return worker;
  };
  return {
    fake,
    database,
    store,
    taskQueue,
    temporalEnv: env.processEnv,
    agentId,
    sessionKey: `agent:${agentId}:main`,
    startWorker,
    async startReadyWorker(extraEnv) {
      const worker = startWorker(extraEnv);
      await worker.ready;
      return worker;
    },
    async startInProcessWorker() {
      inProcess.push((await runInProcessWorker(env, taskQueue, testDeps(store, fake.url))).stop);
    },
    client: (tuning) => keelClient(env, taskQueue, tuning),
    async close() {
      await Promise.all(workers.splice(0).map((w) => w.kill()));
      for (const stop of inProcess.splice(0)) await stop();
      await store.close();
      await database.close();
      await fake.close();
    },
  };
}

/** One stored entry, as the checks read it. */
export interface StoredEntry {
  readonly id: string;
  readonly type: string;
  readonly role: string | null;
  readonly payload: Record<string, any>;
}

/** The session row and every stored entry of the session, in append order. */
export async function storedTranscript(
  store: Store,
  agentId: string,
  sessionKey: string,
): Promise<{ session: SessionRow; entries: StoredEntry[] }> {
  const session = await getSession(store.db, agentId, sessionKey);
  if (!session) throw new Error(`no session row for ${agentId}/${sessionKey}`);
  const rows = await allEntries(store.db, agentId, session.session_id);
  return {
    session,
    entries: rows.map((r) => ({
      id: r.id,
      type: r.type,
      role: r.role,
      payload: r.payload as unknown as Record<string, any>,
    })),
  };
}

/** The text of a stored message entry (text blocks joined; a plain string content as is). */
export function entryText(entry: StoredEntry): string {
  const content = entry.payload.message?.content;
  if (typeof content === 'string') return content;
  return (
    (content as Array<{ type: string; text?: string }> | undefined)
      ?.filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('') ?? ''
  );
}

/** A promise the test opens when it is ready (e.g. to let the fake answer only after a lock is held). */
export function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}
