/**
 * What every crash test needs: a database reachable by URL, the fake Anthropic server, worker
 * processes to SIGKILL, and the stored transcript of a session to check afterwards.
 */
import { resolve } from 'node:path';
import { openStore, type Store } from '../../src/store/connect';
import { getSession } from '../../src/store/sessions-repo';
import type { SessionRow } from '../../src/store/schema';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic';
import type { SharedDatabase, SharedDatabaseKind } from './shared-database';
import { spawnWorkerProcess, uniqueTaskQueue, type TemporalTestEnv, type WorkerProcess } from './temporal';
import { allEntries } from './store-readers';

/** Path of the tools module worker processes load (KEEL_TOOLS_MODULE). */
export const CRASH_TOOLS_MODULE = resolve(__dirname, 'crash-tools.ts');

export interface CrashRig {
  readonly fake: FakeAnthropic;
  readonly database: SharedDatabase;
  readonly store: Store;
  readonly taskQueue: string;
  /** A fresh agent and its main session key: workflow ids never collide across tests. */
  readonly agentId: string;
  readonly sessionKey: string;
  /** Spawns `workers/main.ts` against this rig's database, fake and task queue, plus `extraEnv`. */
  startWorker(extraEnv?: Record<string, string>): WorkerProcess;
  /** SIGKILLs every worker still running and closes the rig. */
  close(): Promise<void>;
}

export async function openCrashRig(env: TemporalTestEnv, kind: SharedDatabaseKind): Promise<CrashRig> {
  const fake = await startFakeAnthropic();
  const database = await kind.open();
  const store = await openStore({ kind: 'postgres', url: database.url, maxConnections: 2 });
  const taskQueue = uniqueTaskQueue('keel-crash');
  const agentId = `crash${Math.random().toString(36).slice(2, 8)}`;
  const workers: WorkerProcess[] = [];
  return {
    fake,
    database,
    store,
    taskQueue,
    agentId,
    sessionKey: `agent:${agentId}:main`,
    startWorker(extraEnv = {}) {
      const worker = spawnWorkerProcess({
        TEMPORAL_ADDRESS: env.server.address,
        DATABASE_URL: database.url,
        KEEL_TASK_QUEUE: taskQueue,
        // No daily reset: a run crossing the reset hour must not rotate the session mid-test.
        KEEL_RESET_MODE: 'none',
        ...fake.env,
        ...extraEnv,
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      await Promise.all(workers.splice(0).map((w) => w.kill()));
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
export async function storedTranscript(store: Store, agentId: string, sessionKey: string): Promise<{ session: SessionRow; entries: StoredEntry[] }> {
  const session = await getSession(store.db, agentId, sessionKey);
  if (!session) throw new Error(`no session row for ${agentId}/${sessionKey}`);
  const rows = await allEntries(store.db, agentId, session.session_id);
  return {
    session,
    entries: rows.map((r) => ({ id: r.id, type: r.type, role: r.role, payload: r.payload as unknown as Record<string, any> })),
  };
}

/** The text of a stored message entry (text blocks joined; a plain string content as is). */
export function entryText(entry: StoredEntry): string {
  const content = entry.payload.message?.content;
  if (typeof content === 'string') return content;
  return (content as Array<{ type: string; text?: string }> | undefined)?.filter((b) => b.type === 'text').map((b) => b.text).join('') ?? '';
}

/** A promise the test opens when it is ready (e.g. to let the fake answer only after a lock is held). */
export function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}
