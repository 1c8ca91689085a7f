import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { ApplicationFailure } from '@temporalio/common';
import { Client } from '@temporalio/client';
import { openStore, type Store, type StoreTarget } from '../../src/store/connect';
import { createCompactionRow } from '../../src/store/compactions-repo';
import { sessionWorkflowId } from '../../src/sessions/session-key';
import { freshSchemaUrl, testDatabases, memoryPglite } from '../support/databases';
import type { Database } from '../../src/store/schema';
import { ensureSession } from '../support/ensure-session';
import { createTurnActivities } from '../../activities/turn-activities';
import { FailureTypes } from '../../src/protocol';
import { testDeps } from '../support/keel-deps';
import { runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue, type TemporalTestEnv } from '../support/temporal';
import { keel } from '../support/keel-cli';

const NO_MODEL = 'http://127.0.0.1:9';

async function rowCounts(db: Kysely<Database>): Promise<Record<string, number>> {
  const count = async (table: 'sessions' | 'transcript_entries' | 'memory_notes' | 'compactions') =>
    (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(db)).rows[0]!.n;
  return {
    sessions: await count('sessions'),
    entries: await count('transcript_entries'),
    notes: await count('memory_notes'),
    compactions: await count('compactions'),
  };
}
const NOTHING = { sessions: 0, entries: 0, notes: 0, compactions: 0 };

describe.each(testDatabases())('beginCompaction on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(async () => store.close());
  const input = {
    agentId: 'main',
    sessionKey: 'agent:main:typo',
    now: new Date(0).toISOString(),
    newSessionId: 'new-id',
  };

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
    await ensureSession(store.db, {
      agentId: 'main',
      sessionKey: input.sessionKey,
      newSessionId: 'existing',
      now: new Date(0),
    });
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
    const store = await openStore(memoryPglite());
    const taskQueue = uniqueTaskQueue('unknown-session');
    const worker = await runInProcessWorker(env, taskQueue, testDeps(store, NO_MODEL));
    try {
      const cliEnv = {
        ...env.processEnv,
        KEEL_TASK_QUEUE: taskQueue,
        KEEL_HOME: home,
        DATABASE_URL: undefined,
      };
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

  it('doctor finds work whose workflow is gone (a running compaction, tool arguments of a turn) and --fix settles it, on each database', async () => {
    const client = new Client({ connection: env.connection, namespace: env.namespace });
    const live = sessionWorkflowId('main', 'agent:main:live');
    // A session workflow that runs (nobody polls its task queue, so it stays RUNNING).
    await client.workflow.start('sessionWorkflow', {
      workflowId: live,
      taskQueue: uniqueTaskQueue('doctor-idle'),
      args: [],
    });
    const variants: Array<{ target: StoreTarget; env: Record<string, string | undefined> }> = [
      { target: { kind: 'pglite', dataDir: join(home, 'db') }, env: { DATABASE_URL: undefined } },
    ];
    if (process.env.TEST_DATABASE_URL) {
      const url = await freshSchemaUrl(process.env.TEST_DATABASE_URL);
      variants.push({ target: { kind: 'postgres', url }, env: { DATABASE_URL: url } });
    }
    try {
      for (const variant of variants) {
        const store = await openStore(variant.target);
        try {
          const now = new Date();
          for (const key of ['gone', 'live']) {
            await ensureSession(store.db, {
              agentId: 'main',
              sessionKey: `agent:main:${key}`,
              newSessionId: `s-${key}`,
              now,
            });
            await store.db
              .insertInto('pending_tool_args')
              .values({
                agent_id: 'main',
                session_id: `s-${key}`,
                assistant_entry_id: 'a1',
                tool_call_id: `call-${key}`,
                arguments: '{}',
                created_at: now,
              })
              .execute();
            await createCompactionRow(store.db, {
              id: `c-${key}`,
              agentId: 'main',
              sessionKey: `agent:main:${key}`,
              sessionId: `s-${key}`,
              trigger: 'threshold',
              workflowId: key === 'live' ? live : null,
              retryOf: null,
              now,
              countAttempt: true,
            });
          }
        } finally {
          await store.close();
        }
        const cliEnv = { ...env.processEnv, KEEL_HOME: home, ...variant.env };
        const check = await keel(['doctor', '--json'], cliEnv);
        expect(check.code).toBe(1);
        const report = JSON.parse(check.stdout);
        expect(report.skipped).toEqual([]);
        expect(report.findings).toEqual([
          expect.objectContaining({
            check: 'workflow-gone',
            sessionKey: 'agent:main:gone',
            repair: 'fixable',
            detail: expect.stringMatching(
              /^compaction c-gone is running in the store but its workflow keel-compaction\/main\/agent:main:gone is NOT_FOUND/,
            ),
          }),
          expect.objectContaining({
            check: 'workflow-gone',
            sessionKey: 'agent:main:gone',
            repair: 'fixable',
            detail: expect.stringContaining('1 tool calls wait for their run'),
          }),
        ]);
        const fix = await keel(['doctor', '--fix'], cliEnv);
        expect(fix.code).toBe(0);
        expect(fix.stderr).toContain('fixed 2');
        const after = await openStore(variant.target);
        try {
          const statuses = await after.db
            .selectFrom('compactions')
            .select(['id', 'status', 'error'])
            .orderBy('id')
            .execute();
          expect(statuses).toEqual([
            {
              id: 'c-gone',
              status: 'failed',
              error: expect.stringContaining('is NOT_FOUND; marked failed by keel doctor'),
            },
            { id: 'c-live', status: 'running', error: null },
          ]);
          expect(
            (await after.db.selectFrom('pending_tool_args').select('tool_call_id').execute()).map(
              (r) => r.tool_call_id,
            ),
          ).toEqual(['call-live']);
        } finally {
          await after.close();
        }
      }
    } finally {
      await client.workflow.getHandle(live).terminate();
    }
  });

  it('export says the session does not exist, exits 1 and writes no file', async () => {
    const out = join(home, 'out.jsonl');
    const run = await keel(['export', 'agent:main:typo', '--agent', 'main', '--out', out], {
      KEEL_HOME: home,
      DATABASE_URL: undefined,
      TEMPORAL_ADDRESS: undefined,
    });
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
