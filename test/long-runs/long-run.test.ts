/**
 * Long agent runs on the real path (a worker, the strict fake enforcing a 32,000-token window, a
 * tools module): one turn of hundreds of tool rounds compacts as often as it needs, hands itself on
 * by continue-as-new to keep each run's history bounded, and stops at its budget with a report.
 */
import { ApplicationFailure } from '@temporalio/common';
import { Client } from '@temporalio/client';
import { testDatabases } from '../support/databases';
import { fakePromptTokens, fakeReply, type FakeRequest } from '../../src/testing';
import { toolChoiceIsNone } from '../../src/testing/fake-request-rules';
import { integrationSuite } from '../support/integration';
import { waitUntil } from '../support/wait-until';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  routedResponder,
} from '../support/durable-turn-helpers';
import {
  decisionId,
  DECISION_EVERY,
  REPORT_TOOL,
  reportReader,
  reportTask,
  reportTools,
} from '../support/report-parts';
import { sessionWorkflowId } from '../../src/sessions/session-key';
import { FailureTypes } from '../../src/protocol';
import { SessionEventReader } from '../../src/store/session-events-repo';

const WINDOW = 32_000;
const suite = integrationSuite({ fake: { tokenLimit: WINDOW, countMaxTokens: true } });
/** A run's history bound: ~100 rounds of a model call, a tool call and their workflow tasks, plus the compactions among them. */
const MAX_EVENTS_PER_RUN = 2_500;
const windowConfig = { contextWindowTokens: WINDOW, reserveTokens: 4_000, reserveTokensFloor: 0 };

/** The agent's own requests (not the summarizer's or the flush's), from index `from` on. */
function agentRequests(requests: readonly FakeRequest[], from: number): FakeRequest[] {
  return requests.slice(from).filter((r) => !isSummarizerRequest(r) && !isFlushRequest(r));
}

/** The runs of a session's workflow (continue-as-new starts a new one each time), with each run's history length. */
async function workflowRuns(workflowId: string): Promise<number[]> {
  const client = new Client({ connection: suite.env.connection, namespace: suite.env.namespace });
  const lengths: number[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    lengths.push(run.historyLength);
  return lengths;
}

// The 300-round runs take minutes each: they run on one database (PostgreSQL when CI has it).
describe.each(testDatabases().slice(-1))('300-round runs on $name', (database) => {
  const db = suite.storePerTest(database);

  it.each([['legacy'], ['budgeted']])(
    'finishes a 300-round turn in a 32k window with the %s engine: compacting as it goes, no request over the window',
    (engine) => {
      const calls: Array<{ key: string; part: number }> = [];
      return suite.withWorker(
        db.store,
        { tools: reportTools(calls), config: { ...windowConfig, contextEngine: engine } },
        async ({ client, store, fake }) => {
          const from = fake.requests.length;
          fake.respondWith(routedResponder(reportReader));
          const agent = freshDurableAgent();
          const key = `agent:${agent}:main`;
          const result = await client.sendMessage(key, reportTask(300));

          expect(result.reply).toBe('Done: all 300 parts read.');
          expect(result.stopReason).toBeUndefined();
          // Every part read once, in order: no round lost or repeated across compactions and runs.
          expect(calls.map((c) => c.part)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
          expect(new Set(calls.map((c) => c.key)).size).toBe(300);
          expect(result.modelCalls).toBe(301);
          // Every request the model received fit the window with its max_tokens.
          expect(fake.overflowed.filter((o) => o.request.index >= from)).toEqual([]);
          for (const r of fake.requests.slice(from))
            expect(fakePromptTokens(r.body) + (r.body.max_tokens ?? 0)).toBeLessThanOrEqual(WINDOW);
          // It compacted several times, and the turn counted them.
          const compactions = await store.db
            .selectFrom('compactions')
            .select(['status', 'trigger'])
            .where('agent_id', '=', agent)
            .execute();
          expect(compactions.length).toBeGreaterThanOrEqual(3);
          expect(compactions.every((c) => c.status === 'succeeded')).toBe(true);
          expect(result.compactions).toBe(compactions.length);
          // The task survived every compaction: the last request still carries it, verbatim.
          const agentCalls = agentRequests(fake.requests, from);
          expect(JSON.stringify(agentCalls[agentCalls.length - 1]!.body.messages)).toContain(reportTask(300));
          // So did the decisions: each decision identifier reached the last summary or the kept tail.
          const last = JSON.stringify(agentCalls[agentCalls.length - 1]!.body.messages);
          for (let n = DECISION_EVERY; n <= 300; n += DECISION_EVERY) expect(last).toContain(decisionId(n));
          // The turn handed itself on between rounds: more than one workflow run, none holding the whole turn.
          const runs = await workflowRuns(sessionWorkflowId(agent, key));
          expect(runs.length).toBeGreaterThanOrEqual(3);
          expect(Math.max(...runs)).toBeLessThan(MAX_EVENTS_PER_RUN);
          // The result lists the most recent tool calls and counts the rest.
          expect((result.toolCalls?.length ?? 0) + (result.toolCallsOmitted ?? 0)).toBe(300);
        },
      );
    },
    900_000,
  );
});

describe.each(testDatabases())('run budgets on $name', (database) => {
  const db = suite.storePerTest(database);

  it('stops at its step budget with a last call without tools, then a continue finishes the run', async () => {
    const calls: Array<{ key: string; part: number }> = [];
    await suite.withWorker(db.store, { tools: reportTools(calls), config: windowConfig }, async ({ client, fake }) => {
      const from = fake.requests.length;
      fake.respondWith(routedResponder(reportReader));
      const key = `agent:${freshDurableAgent()}:main`;
      const stopped = await client.sendMessage(key, reportTask(12), { budget: { maxModelCalls: 8 } });

      expect(stopped.modelCalls).toBe(8);
      expect(stopped.stopReason).toEqual({
        kind: 'budget',
        limit: 'modelCalls',
        modelCalls: 8,
        maxModelCalls: 8,
        tokens: expect.any(Number),
        maxTokens: expect.any(Number),
      });
      expect(stopped.reply).toBe('Stopped at part 7 of 12; next is part 8.');
      // The last call went with tools defined but forbidden, and asked for the report; the others could call tools.
      const requests = agentRequests(fake.requests, from);
      expect(requests).toHaveLength(8);
      expect(requests.slice(0, 7).map((r) => toolChoiceIsNone(r.body))).toEqual(Array(7).fill(false));
      const report = requests[7]!;
      expect(toolChoiceIsNone(report.body)).toBe(true);
      expect(report.body.tools?.map((t) => t.name)).toContain(REPORT_TOOL);
      expect(JSON.stringify(report.body.messages)).toContain('reached its step limit (8 of 8 model calls');
      expect(calls.map((c) => c.part)).toEqual([1, 2, 3, 4, 5, 6, 7]);

      // "continue": the run goes on from part 8, nothing read twice, and the report request is not in the context.
      const done = await client.sendMessage(key, 'continue');
      expect(done.reply).toBe('Done: all 12 parts read.');
      expect(done.stopReason).toBeUndefined();
      expect(calls.map((c) => c.part)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      const after = agentRequests(fake.requests, from).slice(8);
      expect(JSON.stringify(after[0]!.body.messages)).not.toContain('reached its step limit');
    });
  }, 300_000);

  it('stops at its token budget the same way', async () => {
    const calls: Array<{ key: string; part: number }> = [];
    await suite.withWorker(db.store, { tools: reportTools(calls), config: windowConfig }, async ({ client, fake }) => {
      fake.respondWith(routedResponder(reportReader));
      const key = `agent:${freshDurableAgent()}:main`;
      const sending = client.sendMessage(key, reportTask(50), { budget: { maxTokens: 20_000 } });
      // While it runs, status shows the turn's calls and tokens against its budget.
      let running: Awaited<ReturnType<typeof client.getStatus>>['runningTurn'];
      while (!running || running.modelCalls < 3)
        running = (await client.getStatus(key).catch(() => undefined))?.runningTurn;
      expect(running.budget).toEqual({ maxModelCalls: 1_000, maxTokens: 20_000 });
      expect(running.tokens).toBeGreaterThan(0);
      expect(running.toolCalls).toBeGreaterThanOrEqual(2);
      const stopped = await sending;
      expect((await client.getStatus(key)).runningTurn).toBeUndefined();
      expect(stopped.stopReason?.limit).toBe('tokens');
      expect(stopped.stopReason!.tokens).toBeGreaterThanOrEqual(20_000);
      expect(stopped.stopReason!.maxTokens).toBe(20_000);
      expect(stopped.reply).toMatch(/^Stopped at part \d+ of 50/);
      expect(calls.length).toBeLessThan(50);
      expect(calls.length).toBe(stopped.modelCalls - 1);
    });
  }, 300_000);

  it('fails a turn whose compaction frees nothing, naming what does not fit', async () => {
    // A system prompt that fills the window by itself: there is nothing a compaction could summarize to make room.
    const identity = `You are a careful reader. ${'Keep every figure exact. '.repeat(6_000)}`;
    await suite.withWorker(db.store, { config: { ...windowConfig, identity } }, async ({ client, fake }) => {
      fake.respondWith(routedResponder(() => fakeReply.text('never answered')));
      const overflowedBefore = fake.overflowed.length;
      const key = `agent:${freshDurableAgent()}:main`;
      const error = await client.sendMessage(key, 'hello').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(ApplicationFailure);
      expect((error as ApplicationFailure).type).toBe(FailureTypes.ContextOverflowAfterCompaction);
      expect((error as ApplicationFailure).message).toMatch(/compacting freed nothing.*KEEL_CONTEXT_WINDOW/);
      // The model was asked once and refused it; nothing was sent again and again.
      expect(fake.overflowed.length - overflowedBefore).toBeLessThanOrEqual(2);
    });
  }, 300_000);

  it('a subagent stops at the budget its spawn set, and its announcement tells the parent why', async () => {
    await suite.withWorker(db.store, { tools: reportTools(), config: windowConfig }, async ({ client, fake }) => {
      const from = fake.requests.length;
      const isParent = (r: FakeRequest) => JSON.stringify(r.body.messages?.[0] ?? '').includes('Delegate the report');
      fake.respondWith(
        routedResponder((r) => {
          if (!isParent(r)) return reportReader(r);
          const text = JSON.stringify(r.body.messages ?? []);
          if (text.includes('Full transcript: sessions_history')) return fakeReply.text('noted');
          if ((r.body.messages?.length ?? 0) > 1) return fakeReply.text('spawned');
          return fakeReply.toolUse([
            {
              id: 'toolu_spawn_report',
              name: 'sessions_spawn',
              input: { task: reportTask(10), budget: { maxModelCalls: 3 } },
            },
          ]);
        }),
      );
      const key = `agent:${freshDurableAgent()}:main`;
      expect((await client.sendMessage(key, 'Delegate the report to a subagent')).reply).toBe('spawned');
      // The child ran three calls, the last without tools, and the parent heard the stop reason.
      const announcedTo = () =>
        fake.requests
          .slice(from)
          .find(
            (r) => isParent(r) && JSON.stringify(r.body.messages ?? []).includes('Full transcript: sessions_history'),
          );
      const announced = await waitUntil(
        'the parent to hear the announcement',
        async () => announcedTo(),
        120_000,
      ).catch((err: unknown) => {
        const seen = fake.requests
          .slice(from)
          .map((r) => `${isParent(r) ? 'parent' : 'child'} ${JSON.stringify(r.body.messages).slice(-160)}`);
        throw new Error(`${String(err)}; requests:\n${seen.join('\n')}`);
      });
      const heard = JSON.stringify(announced.body.messages);
      expect(heard).toContain('Stopped at part 2 of 10');
      expect(heard).toContain('stopped at its step limit: 3 of 3 model calls');
      const child = fake.requests
        .slice(from)
        .filter((r) => !isParent(r) && !isSummarizerRequest(r) && !isFlushRequest(r));
      expect(child.map((r) => toolChoiceIsNone(r.body))).toEqual([false, false, true]);
    });
  }, 300_000);

  it("a cron turn stopped at its budget carries its stop reason on the session's events stream", async () => {
    await suite.withWorker(
      db.store,
      { tools: reportTools(), config: windowConfig },
      async ({ client, store, fake }) => {
        fake.respondWith(routedResponder(reportReader));
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const reader = await SessionEventReader.open(store.db, { agentId: agent, sessionKey: key }, 0);
        const result = await client.sendMessage(key, reportTask(9), { event: 'cron', budget: { maxModelCalls: 3 } });
        expect(result.stopReason?.limit).toBe('modelCalls');
        const events = await reader.read();
        expect(events).toEqual([
          expect.objectContaining({
            kind: 'system',
            event: 'cron',
            reply: 'Stopped at part 2 of 9; next is part 3.',
            stopReason: expect.objectContaining({
              kind: 'budget',
              limit: 'modelCalls',
              modelCalls: 3,
              maxModelCalls: 3,
            }),
          }),
        ]);
      },
    );
  }, 300_000);
});
