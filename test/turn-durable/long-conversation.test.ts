import { z } from 'zod';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import {
  FLUSH_MARKER,
  endsWithToolResult,
  freshDurableAgent,
  isFlushRequest,
  lastUserText,
  maintenanceTimeline,
  routedResponder,
  waitIdle,
} from '../support/durable-turn-helpers';
import { getSession } from '../../src/store/sessions-repo';
import { ToolRegistry } from '../../src/tools/registry';
import type { CustomEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

/** Window and reserve chosen so the threshold (30,000) is crossed every few turns of ~2k tokens each. */
const WINDOW = 50_000;
const RESERVE = 20_000;
const THRESHOLD = WINDOW - RESERVE;
const TURNS = 50;
/** ~6 KB of plain prose per tool result and ~4 KB per answer: 1,000–2,500 tokens a turn. */
const DOC = 'the quick brown fox jumps over the lazy dog and keeps running through the field '.repeat(75);
const ANSWER_TAIL = 'and that is everything the document says about the fox and the dog in the field '.repeat(50);

const suite = integrationSuite();

/** Turn N: a tool call on turns not divisible by 3, then (or directly) the text "answer N". */
function conversation(request: FakeRequest) {
  const n = Number(/turn (\d+)/.exec(lastUserText(request))?.[1] ?? NaN);
  if (endsWithToolResult(request) || n % 3 === 0) return fakeReply.text(`answer ${n}: ${ANSWER_TAIL}`);
  return fakeReply.toolUse([{ id: `toolu_doc_${n}_${request.index}`, name: 'fetch_doc', input: { n } }]);
}

describe.each(testDatabases())('a 50-turn tool-using conversation on $name', (database) => {
  const db = suite.storePerTest(database);

  it('compacts after exactly the turns whose context crossed window − reserve, flushes memory once per cycle, and delivers every reply and no flush reply', async () => {
    const tools = new ToolRegistry().register({
      name: 'fetch_doc',
      description: 'Fetches a document',
      input: z.object({ n: z.number() }),
      run: async ({ n }) => `doc ${n}: ${DOC}`,
    });
    const options = {
      tools,
      config: { contextWindowTokens: WINDOW, reserveTokens: RESERVE },
      contextWindowTokens: WINDOW,
    };
    await suite.withWorker(db.store, options, async ({ client, store, fake }) => {
      const firstRequest = fake.requests.length;
      fake.respondWith(routedResponder(conversation));
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const results = [];
      for (let i = 1; i <= TURNS; i++) results.push(await client.sendMessage(key, `turn ${i}`));
      await waitIdle(() => client.getStatus(key));

      // Every reply is the conversation's, in order; the flush's NO_REPLY never reached a caller.
      expect(results.map((r) => r.reply)).toEqual(
        Array.from({ length: TURNS }, (_, i) => `answer ${i + 1}: ${ANSWER_TAIL}`),
      );
      expect(results.map((r) => r.turn)).toEqual(Array.from({ length: TURNS }, (_, i) => i + 1));
      expect(results.every((r) => !r.silent)).toBe(true);

      // Post-turn compactions follow exactly the turns whose context crossed the threshold.
      const { workflowId } = client.identify(key);
      const timeline = maintenanceTimeline(await client.temporal.workflow.getHandle(workflowId).fetchHistory());
      const turns = timeline.filter((e) => e.kind === 'finishTurn');
      expect(turns).toHaveLength(TURNS);
      const crossed: number[] = [];
      turns.forEach((t, i) => {
        if (t.kind !== 'finishTurn') return;
        expect(t.contextWindow).toBe(WINDOW);
        expect(t.compact).toBe(t.contextTokens > THRESHOLD);
        if (t.contextTokens > THRESHOLD) crossed.push(i + 1);
      });
      const afterTurn: number[] = [];
      let midTurn = 0;
      let turnNo = 0;
      timeline.forEach((e, i) => {
        if (e.kind === 'finishTurn') turnNo++;
        if (e.kind !== 'compactionStarted') return;
        if (timeline[i - 1]?.kind === 'overBudget') midTurn++;
        else afterTurn.push(turnNo);
      });
      // The sizes make the context cross the threshold several times in 50 turns: after a turn, or
      // within the next one's tool round (where the pre-call check compacts first).
      expect(crossed.length).toBeGreaterThanOrEqual(1);
      expect(crossed.length + midTurn).toBeGreaterThanOrEqual(3);
      expect(afterTurn).toEqual(crossed);
      // Every mid-turn precheck that found the context over budget compacted before calling the model.
      expect(midTurn).toBe(timeline.filter((e) => e.kind === 'overBudget').length);

      const compactions = await store.db
        .selectFrom('compactions')
        .selectAll()
        .where('agent_id', '=', agent)
        .orderBy('started_at')
        .execute();
      expect(compactions).toHaveLength(crossed.length + midTurn);
      expect(compactions.map((c) => [c.trigger, c.status])).toEqual(compactions.map(() => ['threshold', 'succeeded']));
      const session = await getSession(store.db, agent, key);
      expect(session!.compaction_count).toBe(compactions.length);

      // One memory flush per compaction cycle: distinct cycles, each cycle that compacted flushed first.
      const rows = await allEntries(store.db, agent, session!.session_id);
      const flushes = rows.filter(
        (r) => r.type === 'custom' && (r.payload as unknown as CustomEntry).customType === 'memory_flush',
      );
      const cycles = flushes.map((r) => ((r.payload as unknown as CustomEntry).data as { cycle: number }).cycle);
      expect(new Set(cycles).size).toBe(cycles.length);
      for (let c = 0; c < compactions.length; c++) expect(cycles).toContain(c);
      expect(cycles.every((c) => c <= compactions.length)).toBe(true);
      const notes = await store.db.selectFrom('memory_notes').selectAll().where('agent_id', '=', agent).execute();
      expect(notes.map((n) => n.compaction_cycle).sort()).toEqual([...cycles].sort());
      // Each flush was one memory_write round and one NO_REPLY round, and none of it entered the conversation.
      expect(fake.requests.slice(firstRequest).filter(isFlushRequest)).toHaveLength(2 * flushes.length);
      const transcript = JSON.stringify(rows.filter((r) => r.type === 'message').map((r) => r.payload));
      expect(transcript).not.toContain(FLUSH_MARKER);
      expect(transcript).not.toContain('NO_REPLY');
    });
  }, 900_000);
});
