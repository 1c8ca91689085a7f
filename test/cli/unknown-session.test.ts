import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { ApplicationFailure } from '@temporalio/common';
import { openStore, type Store } from '../../src/store/connect';
import type { Database } from '../../src/store/schema';
import { ensureSession } from '../../src/store/sessions-repo';
import { createTurnActivities } from '../../activities/turn-activities';
import { FailureTypes } from '../../src/protocol';
import { testDatabases } from '../support/databases';
import { testDeps } from '../support/keel-deps';
import { runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue, type TemporalTestEnv } from '../support/temporal';
import { keel } from '../support/keel-cli';

const NO_MODEL = 'http://127.0.0.1:9';

async function rowCounts(db: Kysely<Database>): Promise<Record<string, number>> {
  const count = async (table: 'sessions' | 'transcript_entries' | 'memory_notes' | 'compactions') =>
    (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(db)).rows[0]!.n;
  return { sessions: await count('sessions'), entries: await count('transcript_entries'), notes: await count('memory_notes'), compactions: await count('compactions') };
}
const NOTHING = { sessions: 0, entries: 0, notes: 0, compactions: 0 };

describe.each(testDatabases())('beginCompaction on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(async () => store.close());
  const input = { agentId: 'main', sessionKey: 'agent:main:typo', now: new Date(0).toISOString(), newSessionId: 'new-id' };

  it('fails an unknown session with a non-retryable KeelUnknownSession naming the key, and creates nothing', async () => {
    const { beginCompaction } = createTurnActivities(testDeps(store, NO_MODEL));
    const err = await beginCompaction(input).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: FailureTypes.UnknownSession, nonRetryable: true });
    expect((err as Error).message).toContain('agent main has no session agent:main:typo');
    expect(await rowCounts(store.db)).toEqual(NOTHING);
  });

  it('returns the session id of a known session', async () => {
    await ensureSession(store.db, { agentId: 'main', sessionKey: input.sessionKey, newSessionId: 'existing', now: new Date(0) });
    const { beginCompaction } = createTurnActivities(testDeps(store, NO_MODEL));
    expect(await beginCompaction(input)).toEqual({ sessionId: 'existing' });
  });
});

describe('keel status, compact and export of an unknown session', () => {
  let env: TemporalTestEnv;
  let home: string;
  beforeAll(async () => {
    env = await startTemporalTestEnv();
  });
  afterAll(async () => env.close());
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-unknown-'));
  });
  afterEach(async () => rm(home, { recursive: true, force: true }));

  it('status and compact say the session does not exist, exit 1, and create no row, entry or note', async () => {
    const store = await openStore({ kind: 'pglite', dataDir: 'memory://' });
    const taskQueue = uniqueTaskQueue('unknown-session');
    const worker = await runInProcessWorker(env, taskQueue, testDeps(store, NO_MODEL));
    try {
      const cliEnv = { TEMPORAL_ADDRESS: env.server.address, KEEL_TASK_QUEUE: taskQueue, KEEL_HOME: home, DATABASE_URL: undefined };
      const status = await keel(['status', 'agent:main:typo'], cliEnv);
      expect(status.code).toBe(1);
      expect(status.stderr).toContain('keel: no session agent:main:typo for agent main');
      expect(status.stderr).not.toContain('usage:');

      const compact = await keel(['compact', 'agent:main:typo'], cliEnv);
      expect(compact.code).toBe(1);
      expect(compact.stderr).toContain('keel: agent main has no session agent:main:typo; nothing to compact');
      expect(await rowCounts(store.db)).toEqual(NOTHING);
    } finally {
      await worker.stop();
      await store.close();
    }
  });

  it('export says the session does not exist, exits 1 and writes no file', async () => {
    const out = join(home, 'out.jsonl');
    const run = await keel(['export', 'agent:main:typo', '--agent', 'main', '--out', out], { KEEL_HOME: home, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('keel: no session agent:main:typo for agent main');
    expect(run.stderr).not.toContain('usage:');
    const store = await openStore({ kind: 'pglite', dataDir: join(home, 'db') });
    try {
      expect(await rowCounts(store.db)).toEqual(NOTHING);
    } finally {
      await store.close();
    }
    expect(existsSync(out)).toBe(false);
  });
});
