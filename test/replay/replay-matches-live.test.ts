/**
 * The replay's numbers are the live run's: a conversation driven through the real worker (sendMessage,
 * Temporal, the fake Anthropic server) with a small window compacts several times; replaying the
 * stored session under the same policy finds the same compaction points (after which turn, mid-turn
 * or after it), the same tokens before each compaction, and per-turn context tokens within the
 * estimate's margin. The replay reads the store and writes nothing to it.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import {
  endsWithToolResult,
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  lastUserText,
  maintenanceTimeline,
  waitIdle,
} from '../support/durable-turn-helpers';
import { ToolRegistry } from '../../src/tools/registry';
import { configFromEnv } from '../../src/config/keel-config';
import { boundedEstimate } from '../../src/runtime/bounded-estimate';
import { replayCommand } from '../../src/cli/replay';
import type { ReplayCompaction } from '../../src/replay/replay-session';
import type { Store } from '../../src/store/connect';

const WINDOW = 40_000;
const RESERVE = 20_000;
const TURNS = 30;
const DOC = 'the deploy log shows the worker draining its queue before the release window opens again '.repeat(36);
const ANSWER = 'so the queue drains in time and the release can go ahead as planned this evening '.repeat(22);

const suite = integrationSuite();

/** Turn N: a tool call on turns not divisible by 3, then the answer; every 7th turn plants a ticket. */
function conversation(request: FakeRequest) {
  // Summaries are extractive in both runs: the replay writes no model summaries.
  if (isSummarizerRequest(request)) return fakeReply.invalidRequest('this test compacts with extractive summaries');
  if (isFlushRequest(request)) return fakeReply.text('NO_REPLY');
  const n = Number(/turn (\d+)/.exec(lastUserText(request))?.[1] ?? NaN);
  if (endsWithToolResult(request) || n % 3 === 0) return fakeReply.text(`answer ${n}: ${ANSWER}`);
  return fakeReply.toolUse([{ id: `toolu_doc_${n}_${request.index}`, name: 'fetch_doc', input: { n } }]);
}

/** What the system prompt and the tool definitions of a call cost, as the worker counts them. */
function overheadOf(request: FakeRequest): number {
  const system = request.body.system;
  const text =
    typeof system === 'string'
      ? system
      : ((system ?? []) as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n\n');
  const tools = (request.body.tools ?? []).map(({ cache_control: _c, ...t }) => t);
  return (
    boundedEstimate({ role: 'user', content: text }) +
    tools.reduce((n, t) => n + boundedEstimate({ role: 'user', content: JSON.stringify(t) }), 0)
  );
}

/** Row counts and the highest seq of every table a session touches. */
async function storeFootprint(store: Store, agentId: string) {
  const count = async (table: 'transcript_entries' | 'compactions' | 'sessions' | 'memory_notes') =>
    Number(
      (
        await store.db
          .selectFrom(table)
          .select(sql<number>`count(*)::int`.as('n'))
          .where('agent_id', '=', agentId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const maxSeq = await store.db
    .selectFrom('transcript_entries')
    .select(sql<string>`max(seq)::text`.as('s'))
    .where('agent_id', '=', agentId)
    .executeTakeFirstOrThrow();
  const session = await store.db
    .selectFrom('sessions')
    .selectAll()
    .where('agent_id', '=', agentId)
    .executeTakeFirstOrThrow();
  return {
    entries: await count('transcript_entries'),
    compactions: await count('compactions'),
    sessions: await count('sessions'),
    notes: await count('memory_notes'),
    maxSeq: maxSeq.s,
    session,
  };
}

describe.each(testDatabases())('replay against a live run on $name', (database) => {
  const db = suite.storePerTest(database);

  it('finds the live run’s compaction points and per-turn context tokens, reading the store without writing it', async () => {
    const tools = new ToolRegistry().register({
      name: 'fetch_doc',
      description: 'Fetches a document',
      input: z.object({ n: z.number() }),
      run: async ({ n }) => `doc ${n} OPS-${2000 + n}: ${DOC}`,
    });
    const config = { contextWindowTokens: WINDOW, reserveTokens: RESERVE };
    await suite.withWorker(
      db.store,
      { tools, config, contextWindowTokens: WINDOW },
      async ({ client, store, fake }) => {
        const firstRequest = fake.requests.length;
        fake.respondWith(conversation);
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        for (let i = 1; i <= TURNS; i++) await client.sendMessage(key, `turn ${i}: what does the deploy log say?`);
        await waitIdle(() => client.getStatus(key));

        // The live run: per-turn context tokens and where it compacted, from the session's Temporal history.
        const timeline = maintenanceTimeline(
          await client.temporal.workflow.getHandle(client.identify(key).workflowId).fetchHistory(),
        );
        const liveContext: number[] = [];
        const liveCompactions: Array<{ turn: number; trigger: ReplayCompaction['trigger'] }> = [];
        timeline.forEach((e, i) => {
          if (e.kind === 'finishTurn') liveContext.push(e.contextTokens);
          // A compaction right after an over-budget precheck ran inside the turn being played.
          if (e.kind === 'compactionStarted') {
            const midTurn = timeline[i - 1]?.kind === 'overBudget';
            liveCompactions.push({
              turn: midTurn ? liveContext.length + 1 : liveContext.length,
              trigger: midTurn ? 'mid-turn' : 'threshold',
            });
          }
        });
        expect(liveContext).toHaveLength(TURNS);
        expect(liveCompactions.length).toBeGreaterThanOrEqual(2);
        const rows = await store.db
          .selectFrom('compactions')
          .selectAll()
          .where('agent_id', '=', agent)
          .orderBy('started_at')
          .execute();
        expect(rows.map((r) => [r.status, r.degraded])).toEqual(rows.map(() => ['succeeded', true]));

        // The replay, with the policy the worker ran: its window and reserve, and what its prompt and tools cost.
        const conversationRequests = fake.requests
          .slice(firstRequest)
          .filter((r) => !isSummarizerRequest(r) && !isFlushRequest(r));
        const policyFile = join(tmpdir(), `keel-replay-live-${agent}.json`);
        writeFileSync(
          policyFile,
          JSON.stringify({ name: 'live', ...config, overheadTokens: overheadOf(conversationRequests[0]!) }),
        );
        const before = await storeFootprint(store, agent);
        const report = await replayCommand(
          key,
          { policy: policyFile, json: true },
          { configFor: () => configFromEnv({}, config), withDb: (fn) => fn(store.db) },
        );
        expect(await storeFootprint(store, agent)).toEqual(before);
        // A mistyped key is named, and creates nothing.
        await expect(
          replayCommand(
            `${key}x`,
            { json: true },
            { configFor: () => configFromEnv({}, config), withDb: (fn) => fn(store.db) },
          ),
        ).rejects.toThrow(`agent ${agent} has no session ${key}x`);
        expect(await storeFootprint(store, agent)).toEqual(before);

        const [run] = report.policies;
        expect(run.turns).toHaveLength(TURNS);
        expect(run.compactions.map((c) => ({ turn: c.turn, trigger: c.trigger }))).toEqual(liveCompactions);
        // Tokens before each compaction: the same entries and the same previous (extractive) summary.
        expect(run.compactions.map((c) => c.tokensBefore)).toEqual(rows.map((r) => r.tokens_before));
        for (const [i, c] of run.compactions.entries())
          expect(Math.abs(c.tokensAfter - rows[i]!.tokens_after!)).toBeLessThanOrEqual(20);
        // Per turn, well within the estimate's margin: equal before the first compaction; after it, the
        // compaction id in the summary's wrapper and the prompt's after-compaction note differ by a few tokens.
        const deviations = run.turns.map((t, i) => Math.abs(t.contextTokens - liveContext[i]!) / liveContext[i]!);
        expect(Math.max(...deviations)).toBeLessThan(0.01);
        const firstCompaction = liveCompactions[0]!.turn;
        expect(run.turns.slice(0, firstCompaction - 1).map((t) => t.contextTokens)).toEqual(
          liveContext.slice(0, firstCompaction - 1),
        );
        // Tokens sent: every conversation call the fake server received, counted by the replay.
        expect(run.totals.modelCalls).toBe(conversationRequests.length);
      },
    );
  }, 180_000);
});
