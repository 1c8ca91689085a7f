/**
 * The memory flush can never block or fail a compaction nor a turn that has its reply; a busy session
 * passes its continue-as-new point without losing a queued request.
 */
import { sql } from 'kysely';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  lastUserText,
  seedConversation,
  waitIdle,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { getSession } from '../../src/store/sessions-repo';
import { sessionWorkflowId } from '../../src/sessions/session-key';
import type { Store } from '../../src/store/connect';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';
import { loadKeelSettings } from '../../src/config/agent-config';
import { listSessions } from '../../src/operations/sessions/list-sessions';
import { compactionsList } from '../../src/cli/compactions';

const suite = integrationSuite();

async function userTexts(store: Store, agent: string, key: string): Promise<string[]> {
  const session = await getSession(store.db, agent, key);
  return (await allEntries(store.db, agent, session!.session_id))
    .filter((r) => r.type === 'message' && r.role === 'user')
    .map((r) => String((r.payload as unknown as MessageEntry).message.content));
}

describe.each(testDatabases())('memory flush failures and busy queues on $name', (database) => {
  const db = suite.storePerTest(database);

  it('a flush in a 529 storm fails neither the turn at the soft threshold nor the threshold compaction; both failures are recorded', async () => {
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    const { sessionId } = await seedConversation(db.store.db, agent, key, 300);
    const { rows } = await sql<{
      t: number;
    }>`select coalesce(sum(token_estimate), 0)::int as t from transcript_entries where session_id = ${sessionId}`.execute(
      db.store.db,
    );
    const seeded = Number(rows[0]!.t);
    // Window such that the next turn (the seeded history plus system prompt and tool definitions, ~2k)
    // lands between the flush threshold (W − 20k − 4k) and the compaction one (W − 20k).
    const window = seeded + 23_000;
    let flushCalls = 0;
    suite.fake.respondWith((request) => {
      if (isSummarizerRequest(request)) return goodSummarizer(request);
      if (isFlushRequest(request)) {
        flushCalls++;
        return fakeReply.overloaded();
      }
      return fakeReply.text(`answer to ${lastUserText(request).slice(0, 20)}`);
    });
    await suite.withWorker(
      db.store,
      { config: { contextWindowTokens: window }, tuning: { memoryFlushBudgetMs: 4_000 } },
      async ({ client }) => {
        const first = await client.sendMessage(key, 'soft threshold turn');
        expect(first.reply).toBe('answer to soft threshold turn');
        await waitIdle(() => client.getStatus(key));
        expect(flushCalls).toBeGreaterThan(0);
        const afterSoft = await getSession(db.store.db, agent, key);
        expect(afterSoft!.memory_flush_error).toMatch(/Overloaded|overloaded|time budget/);
        expect(afterSoft!.compaction_count).toBe(0);

        // A large message crosses the compaction threshold: the flush fails again, the compaction completes.
        const big = `threshold turn ${'lorem ipsum dolor sit amet '.repeat(700)}`;
        const second = await client.sendMessage(key, big);
        expect(second.reply).toBe(`answer to ${big.slice(0, 20)}`);
        await waitIdle(() => client.getStatus(key));
        const compactions = await db.store.db
          .selectFrom('compactions')
          .selectAll()
          .where('agent_id', '=', agent)
          .execute();
        expect(compactions.map((c) => [c.trigger, c.status])).toEqual([['threshold', 'succeeded']]);
        expect(compactions[0]!.memory_flush).toMatch(/^failed: /);
        // Each message stored once: no failed turn was retried by the client.
        const texts = await userTexts(db.store, agent, key);
        expect(texts.filter((t) => t === 'soft threshold turn')).toHaveLength(1);
        expect(texts.filter((t) => t === big)).toHaveLength(1);
      },
    );
  }, 600_000);

  it('a low-yield compaction holds the next threshold compaction (status says held); a paused session says so until a manual compaction succeeds', async () => {
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    await seedConversation(db.store.db, agent, key, 300);
    // Window 40k: threshold at 20k (reserve 20k), the hold ends at 30k at the latest (halfway into the reserve).
    const window = 40_000;
    suite.fake.respondWith((request) => {
      if (isSummarizerRequest(request)) return goodSummarizer(request);
      if (isFlushRequest(request)) return fakeReply.text('NO_REPLY');
      const text = lastUserText(request);
      return fakeReply.text(
        text.startsWith('over the threshold')
          ? `long answer ${'consectetur adipiscing elit '.repeat(2_000)}`
          : `answer to ${text.slice(0, 20)}`,
      );
    });
    const minReclaimShare = 0.8;
    await suite.withWorker(
      db.store,
      { config: { contextWindowTokens: window, compactionMinReclaimShare: minReclaimShare } },
      async ({ client }) => {
        // Freeing ~70% of ~32k counts as low-yield under a minimum share of 80%.
        expect(await client.compact(key, { keepRecentTokens: 24_000 })).toMatchObject({ status: 'succeeded' });
        const [first] = await db.store.db.selectFrom('compactions').selectAll().where('agent_id', '=', agent).execute();
        expect((first!.tokens_before! - first!.tokens_after!) / first!.tokens_before!).toBeLessThan(minReclaimShare);

        // A long message (still under the pre-call budget) and a long reply take the context back over the threshold.
        await client.sendMessage(key, `over the threshold again ${'lorem ipsum dolor sit amet '.repeat(800)}`);
        await waitIdle(() => client.getStatus(key));
        const status = await client.getStatus(key);
        expect(status.contextTokens).toBeGreaterThan(window - 20_000);
        expect(status.autoCompaction).toEqual({ state: 'held', untilTokens: 30_000 });
        // Without the hold this turn would have compacted again, for as little.
        expect(
          await db.store.db.selectFrom('compactions').select('id').where('agent_id', '=', agent).execute(),
        ).toHaveLength(1);

        // Three failures in a row pause auto-compaction: status, `keel sessions` and `keel compactions --failed` say so.
        await db.store.db
          .updateTable('sessions')
          .set({ compaction_failures: 3 })
          .where('agent_id', '=', agent)
          .execute();
        // This turn starts over the pre-call budget: the hold lets it run without compacting first.
        await client.sendMessage(key, 'third turn, paused');
        await waitIdle(() => client.getStatus(key));
        expect((await client.getStatus(key)).autoCompaction).toEqual({ state: 'paused' });
        const settings = loadKeelSettings({ env: {}, overrides: {} });
        expect((await listSessions(db.store.db, settings, { agentId: agent }))[0]!.autoCompactionPaused).toBe(true);
        const listed = await compactionsList({ db: db.store.db, failed: true, agentId: agent, json: true });
        expect(listed.pausedSessions).toEqual([{ agentId: agent, sessionKey: key, consecutiveFailures: 3 }]);

        // A manual compaction that succeeds resumes it.
        expect(await client.compact(key, { keepRecentTokens: 24_000 })).toMatchObject({ status: 'succeeded' });
        expect((await getSession(db.store.db, agent, key))!.compaction_failures).toBe(0);
        expect((await client.getStatus(key)).autoCompaction).toBeUndefined();
        expect(
          (await compactionsList({ db: db.store.db, failed: true, agentId: agent, json: true })).pausedSessions,
        ).toEqual([]);
      },
    );
  }, 600_000);

  it('a configured flush prompt, system text and keep budget reach the flush and /compact; a flush turned off never runs', async () => {
    const prompt = 'Custom flush: write what matters with memory_write, then NO_REPLY.';
    const flushes: string[] = [];
    const respond = (request: Parameters<typeof isFlushRequest>[0]) => {
      if (isSummarizerRequest(request)) return goodSummarizer(request);
      const last = JSON.stringify(request.body.messages?.at(-1) ?? '');
      if (last.includes(prompt) || isFlushRequest(request)) {
        flushes.push(JSON.stringify(request.body.system));
        return fakeReply.text('NO_REPLY');
      }
      return fakeReply.text(`re: ${lastUserText(request)} ${'with enough words to keep '.repeat(20)}`);
    };
    let keptTail = 0;
    const config = {
      memoryFlushPrompt: prompt,
      memoryFlushSystemPrompt: 'FLUSH-SYSTEM-ADDITION',
      keepRecentTokens: 400,
    };
    await suite.withWorker(db.store, { config }, async ({ client, fake }) => {
      fake.respondWith(respond);
      const key = `agent:${freshDurableAgent()}:main`;
      for (let i = 0; i < 4; i++) await client.sendMessage(key, `turn ${i}`);
      const result = await client.compact(key);
      // The flush ran with the configured instruction, its system text last.
      expect(flushes).toHaveLength(1);
      expect(flushes[0]).toMatch(/FLUSH-SYSTEM-ADDITION"$/);
      expect(result.status).toBe('succeeded');
      keptTail = result.tokensAfter;
    });
    flushes.length = 0;
    await suite.withWorker(db.store, { config: { memoryFlushEnabled: false } }, async ({ client, fake }) => {
      fake.respondWith(respond);
      const key = `agent:${freshDurableAgent()}:main`;
      for (let i = 0; i < 4; i++) await client.sendMessage(key, `turn ${i}`);
      const result = await client.compact(key);
      expect(result.status).toBe('succeeded');
      // Off: no flush request.
      expect(flushes).toEqual([]);
      // Without a keep budget /compact is a hard checkpoint: the same conversation with the agent's
      // 400-token budget kept a recent tail beside the summary.
      expect(keptTail).toBeGreaterThan(result.tokensAfter + 200);
    });
  }, 300_000);

  it(
    'a never-empty queue passes the continue-as-new point with every request answered once, in order',
    () =>
      suite.withWorker(db.store, { tuning: { maxTurnsPerRun: 3 } }, async ({ client, fake }) => {
        fake.respondWith((request) => fakeReply.text(`re: ${lastUserText(request)}`, { delayMs: 150 }));
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const texts = Array.from({ length: 12 }, (_, i) => `queued ${i}`);
        const sends = [];
        for (const text of texts) {
          // Each send is admitted before the next starts, so their order is defined; all wait together.
          let admitted!: () => void;
          const done = new Promise<void>((r) => (admitted = r));
          sends.push(client.sendMessage(key, text, { onAdmitted: admitted }));
          await done;
        }
        const results = await Promise.all(sends);
        results.forEach((r, i) => expect(r.reply).toBe(`re: ${texts[i]}`));
        expect(results.map((r) => r.turn)).toEqual(texts.map((_, i) => i + 1));
        expect(await userTexts(db.store, agent, key)).toEqual(texts);
        // The session continued-as-new at least every 3 turns while the queue was never empty.
        const workflowId = sessionWorkflowId(agent, key);
        const runs = [];
        for await (const execution of client.temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
          runs.push(execution.runId);
        expect(runs.length).toBeGreaterThanOrEqual(4);
      }),
    600_000,
  );

  it(
    'an idle session workflow closes after its quiet period and the next message restarts it with its counters',
    () =>
      suite.withWorker(db.store, { tuning: { idleCloseMs: 1_500 } }, async ({ client, fake }) => {
        fake.respondWith((request) => fakeReply.text(`re: ${lastUserText(request)}`));
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const first = await client.sendMessage(key, 'before the quiet period');
        const handle = client.temporal.workflow.getHandle(sessionWorkflowId(agent, key));
        const firstRun = (await handle.describe()).runId;
        await handle.result(); // closes by itself once idle
        expect((await handle.describe()).status.name).toBe('COMPLETED');

        const second = await client.sendMessage(key, 'after the quiet period');
        expect(second.reply).toBe('re: after the quiet period');
        expect(second.turn).toBe(first.turn + 1);
        const status = await client.getStatus(key);
        expect(status.lastEntryId).toBe(second.assistantEntryId);
        expect((await handle.describe()).runId).not.toBe(firstRun);
        expect(await userTexts(db.store, agent, key)).toEqual(['before the quiet period', 'after the quiet period']);
      }),
    300_000,
  );
});
