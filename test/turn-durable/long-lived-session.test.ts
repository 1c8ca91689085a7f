import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  historyBytes,
  lastUserText,
  realisticMessage,
  routedResponder,
  seedConversation,
} from '../support/durable-turn-helpers';
import { getSession } from '../../src/store/sessions-repo';
import type { KeelClient } from '../../src/client/keel-client';

const suite = integrationSuite();

/**
 * Every conversation call answers "reply to <the user's message>" (the tail of the last user text: after a
 * compaction the summary and the next message reach the model as one user turn); summarizer and flush
 * calls are routed.
 */
const echo = routedResponder((request) => {
  const text = lastUserText(request);
  return fakeReply.text(`reply to ${/(message \d+)\s*$/.exec(text)?.[1] ?? text}`);
});

/** OpenClaw's pressure levels, written out independently of the code under test. */
function expectedPressure(used: number, window: number): string {
  const percent = (used / window) * 100;
  return percent > 85 ? '85' : percent >= 70 ? '70' : percent >= 50 ? '50' : 'normal';
}

async function runId(client: KeelClient, key: string): Promise<string> {
  const d = await client.temporal.workflow.getHandle(client.identify(key).workflowId).describe();
  return d.runId;
}

/** Waits until the session's current run is one that has accepted no Update yet (just continued-as-new). */
async function waitForFreshRun(client: KeelClient, key: string, timeoutMs = 60_000): Promise<void> {
  const handle = client.temporal.workflow.getHandle(client.identify(key).workflowId);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const history = await handle.fetchHistory();
    if (!(history.events ?? []).some((e) => e.workflowExecutionUpdateAcceptedEventAttributes)) return;
    if (Date.now() > deadline) throw new Error('the session did not continue-as-new');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.each(testDatabases())('a long-lived session on $name', (database) => {
  const db = suite.storePerTest(database);
  beforeEach(() => suite.fake.respondWith(echo));

  it('continues-as-new every 3 turns and carries turn numbers, context tokens, the window and the compaction count across runs', async () => {
    // The worker's window differs from the default and the client does not name it: only a carried value can report it.
    const WINDOW = 120_000;
    await suite.withWorker(
      db.store,
      { config: { contextWindowTokens: WINDOW }, tuning: { maxTurnsPerRun: 3 } },
      async ({ client, store }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const turns: number[] = [];
        const runs = new Set<string>();
        let compactionId = '';
        // 9 turns: runs 1–3, 4–6, 7–9, then a 4th run that has served no turn yet answers the status.
        for (let i = 1; i <= 9; i++) {
          // Messages of a real length: the manual compaction after the second one has something to reclaim.
          const r = await client.sendMessage(key, `${realisticMessage('Where we are:')} message ${i}`);
          expect(r.reply).toBe(`reply to message ${i}`);
          turns.push(r.turn);
          // A manual compaction in the first run: its count must survive three continue-as-news.
          if (i === 2) compactionId = (await client.compact(key, { keepRecentTokens: 10 })).compactionId;
          runs.add(await runId(client, key));
        }
        expect(turns).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
        await waitForFreshRun(client, key);
        runs.add(await runId(client, key));
        expect(runs.size).toBe(4);

        const status = await client.getStatus(key);
        const session = await getSession(store.db, agent, key);
        expect(status.turnsCompleted).toBe(9);
        expect(status.compactionCount).toBe(1);
        expect(session!.compaction_count).toBe(1);
        expect(status.lastCompactionId).toBe(compactionId);
        expect(status.contextTokens).toBe(session!.context_tokens);
        expect(status.contextTokens).toBeGreaterThan(0);
        expect(status.contextWindow).toBe(WINDOW);
      },
    );
  }, 300_000);

  it('adds the same history bytes per turn to a session of 1,000 entries as to a new one', async () => {
    await suite.withWorker(db.store, {}, async ({ client, store }) => {
      /** History bytes added by turns 2–6, per turn (turn 1 also starts the workflow). */
      async function perTurnGrowth(key: string): Promise<number> {
        await client.sendMessage(key, 'message 01');
        const { workflowId } = client.identify(key);
        const before = await historyBytes(client.temporal, workflowId);
        for (let i = 2; i <= 6; i++) await client.sendMessage(key, `message 0${i}`);
        return ((await historyBytes(client.temporal, workflowId)) - before) / 5;
      }
      const small = perTurnGrowth(`agent:${freshDurableAgent()}:main`);
      const agent = freshDurableAgent();
      const bigKey = `agent:${agent}:main`;
      await seedConversation(store.db, agent, bigKey, 1_000, 10);
      const [smallGrowth, bigGrowth] = [await small, await perTurnGrowth(bigKey)];
      expect(smallGrowth).toBeGreaterThan(0);
      expect(bigGrowth / smallGrowth).toBeLessThan(1.5);
      expect(smallGrowth / bigGrowth).toBeLessThan(1.5);
    });
  }, 300_000);

  it('reports context tokens, window, percent used, pressure and compaction count that match the database after a compaction', async () => {
    const WINDOW = 100_000;
    await suite.withWorker(
      db.store,
      { config: { contextWindowTokens: WINDOW }, contextWindowTokens: WINDOW },
      async ({ client, store }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        // ~54k tokens in a 100k window: pressure '50', below the 80k threshold.
        await seedConversation(store.db, agent, key, 500);
        await client.sendMessage(key, 'first');
        const before = await client.getStatus(key);
        const result = await client.compact(key, { keepRecentTokens: 5_000 });
        expect(result.status).toBe('succeeded');
        await client.sendMessage(key, 'second');

        const status = await client.getStatus(key);
        const session = await getSession(store.db, agent, key);
        const rows = await store.db.selectFrom('compactions').selectAll().where('agent_id', '=', agent).execute();
        expect(rows).toHaveLength(1);
        expect(status.contextTokens).toBe(session!.context_tokens);
        expect(status.contextTokens).toBeLessThan(before.contextTokens);
        expect(status.contextWindow).toBe(WINDOW);
        // Status rounds to one decimal: 7.65 may read 7.7, half a tenth away (and a float's hair more).
        const exactPercent = (session!.context_tokens / WINDOW) * 100;
        expect(Math.abs(status.percentUsed - exactPercent)).toBeLessThanOrEqual(0.05 + 1e-9);
        expect(status.pressure).toBe(expectedPressure(session!.context_tokens, WINDOW));
        expect(before.pressure).toBe(expectedPressure(before.contextTokens, WINDOW));
        expect(status.compactionCount).toBe(session!.compaction_count);
        expect(status.compactionCount).toBe(1);
        expect(status.lastCompactionId).toBe(rows[0]!.id);
        expect(status.turnsCompleted).toBe(2);
      },
    );
  }, 300_000);
});
