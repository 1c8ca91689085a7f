import { sql } from 'kysely';
import { testDatabases } from '../support/databases';
import { integrationSuite } from '../support/integration';
import { ensureMaintenanceSchedule } from '../../src/temporal/maintenance-schedule';
import { getSession, rotateSession } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import { sessionIdsOfKey } from '../../src/store/session-ids-repo';
import { appendEntries, countEntries } from '../../src/store/entries-repo';
import { MAINTENANCE_SCHEDULE_ID, MAINTENANCE_WORKFLOW_TYPE, type MaintenanceRunSummary } from '../../src/protocol';

const suite = integrationSuite();

describe.each(testDatabases())('maintenance as a Temporal Schedule, on $name', (database) => {
  const db = suite.storePerTest(database);

  it('creates the schedule once, and a triggered run prunes sessions older than the limit in enforce mode', () =>
    suite.withWorker(db.store, {}, async ({ client: keel, store, taskQueue }) => {
      const client = keel.temporal;
      const agent = `m${Math.random().toString(36).slice(2, 8)}`;
      for (const key of ['old', 'new'])
        await ensureSession(store.db, {
          agentId: agent,
          sessionKey: `agent:${agent}:${key}`,
          newSessionId: `${agent}-${key}`,
          now: new Date(),
        });
      await sql`update sessions set updated_at = now() - interval '45 days' where agent_id = ${agent} and session_key = ${`agent:${agent}:old`}`.execute(
        store.db,
      );
      // The kept key was reset 40 days ago: its earlier transcript is pruned, its current one stays.
      await appendEntries(store.db, agent, `${agent}-new`, [
        { entry: { type: 'session', id: `${agent}-new`, timestamp: new Date().toISOString() }, tokenEstimate: null },
      ]);
      await rotateSession(store.db, {
        agentId: agent,
        sessionKey: `agent:${agent}:new`,
        newSessionId: `${agent}-new2`,
        now: new Date(Date.now() - 40 * 86_400_000),
      });
      await sql`update sessions set updated_at = now() where agent_id = ${agent} and session_key = ${`agent:${agent}:new`}`.execute(
        store.db,
      );

      // The schedule is namespace-wide: the first worker creates it, every later call finds it.
      await client.schedule
        .getHandle(MAINTENANCE_SCHEDULE_ID)
        .delete()
        .catch(() => undefined);
      expect(await ensureMaintenanceSchedule(client, { taskQueue, mode: 'warn' })).toBe('created');
      expect(await ensureMaintenanceSchedule(client, { taskQueue, mode: 'warn' })).toBe('unchanged');
      // A worker configured with maintenanceMode "enforce" switches the existing Schedule over.
      expect(await ensureMaintenanceSchedule(client, { taskQueue, mode: 'enforce' })).toBe('mode changed');
      expect((await client.schedule.getHandle(MAINTENANCE_SCHEDULE_ID).describe()).action.args).toEqual([
        { mode: 'enforce' },
      ]);

      const schedule = client.schedule.getHandle(MAINTENANCE_SCHEDULE_ID);
      await schedule.trigger();
      let workflowId: string | undefined;
      for (let i = 0; i < 100 && !workflowId; i++) {
        workflowId = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId;
        if (!workflowId) await new Promise((r) => setTimeout(r, 200));
      }
      expect(workflowId).toBeDefined();
      const summary = (await client.workflow.getHandle(workflowId!).result()) as MaintenanceRunSummary;
      expect(summary.mode).toBe('enforce');
      expect(summary.sampleKeys).toContain(`${agent}/agent:${agent}:old`);
      expect(await getSession(store.db, agent, `agent:${agent}:old`)).toBeUndefined();
      expect(await getSession(store.db, agent, `agent:${agent}:new`)).toBeDefined();
      expect(summary.transcriptsPruned).toBeGreaterThanOrEqual(1);
      expect(await countEntries(store.db, agent, `${agent}-new`)).toBe(0);
      expect((await sessionIdsOfKey(store.db, agent, `agent:${agent}:new`)).map((s) => s.sessionId)).toEqual([
        `${agent}-new2`,
      ]);
      await schedule.delete();
    }));

  it("a worker limited to some agents (allowedAgents) prunes and indexes only theirs, never another agent's sessions in the same database", async () => {
    const mine = `m${Math.random().toString(36).slice(2, 8)}`;
    const theirs = `t${Math.random().toString(36).slice(2, 8)}`;
    for (const agent of [mine, theirs]) {
      await ensureSession(db.store.db, {
        agentId: agent,
        sessionKey: `agent:${agent}:old`,
        newSessionId: `${agent}-old`,
        now: new Date(),
      });
      await sql`update sessions set updated_at = now() - interval '45 days' where agent_id = ${agent}`.execute(
        db.store.db,
      );
    }
    // Entries an import wrote without their search index, in a kept session of each agent.
    const imported = (agent: string, id: string) => ({
      entry: {
        type: 'message' as const,
        id,
        parentId: null,
        timestamp: new Date().toISOString(),
        message: { role: 'user' as const, content: `imported ${id}` },
      },
      tokenEstimate: 1,
    });
    const unindexed = async (agent: string) =>
      (
        await db.store.db
          .selectFrom('transcript_entries')
          .select('id')
          .where('agent_id', '=', agent)
          .where('search_vector', 'is', null)
          .where('search_terms', 'is', null)
          .execute()
      ).length;
    for (const agent of [mine, theirs]) {
      await ensureSession(db.store.db, {
        agentId: agent,
        sessionKey: `agent:${agent}:kept`,
        newSessionId: `${agent}-kept`,
        now: new Date(),
      });
      await appendEntries(db.store.db, agent, `${agent}-kept`, [imported(agent, 'i1'), imported(agent, 'i2')], {
        deferSearchIndex: true,
      });
    }
    await suite.withWorker(db.store, { config: { allowedAgents: [mine] } }, async ({ client, store, taskQueue }) => {
      const summary = (await client.temporal.workflow.execute(MAINTENANCE_WORKFLOW_TYPE, {
        workflowId: `maintenance-${mine}`,
        taskQueue,
        args: [{ mode: 'enforce' }],
      })) as MaintenanceRunSummary;
      expect(summary.sampleKeys).toEqual([`${mine}/agent:${mine}:old`]);
      // The run indexed this worker's agent's imported entries, not the other's.
      expect(summary.entriesIndexed).toBe(2);
      expect([await unindexed(mine), await unindexed(theirs)]).toEqual([0, 2]);
      expect(await getSession(store.db, mine, `agent:${mine}:old`)).toBeUndefined();
      expect(await getSession(store.db, theirs, `agent:${theirs}:old`)).toBeDefined();
    });
  });
});
