/**
 * A local model with a 4,000-token window: long user messages, turn after turn. The reserve takes
 * half the window (not the 20,000 floor), and every request Keel sends — turns, the memory flush, the
 * summarizer's chunks and merge — fits the model's window with its `max_tokens`, which the fake
 * enforces as the real API does. Nothing is configured for the small model but its window: Keel
 * gives its sessions the minimal system prompt and no subagent tools by itself.
 */
import { testDatabases } from '../support/databases';
import { fakePromptTokens, fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  lastUserText,
  routedResponder,
  waitIdle,
} from '../support/durable-turn-helpers';
import { getSession } from '../../src/store/sessions-repo';

const WINDOW = 4_000;
const TURNS = 12;
const WORDS = 600;
const VOCABULARY =
  'the river carried small boats past quiet villages where farmers counted sheep and children learned old songs about distant mountains'.split(
    ' ',
  );

/** Turn `n`'s message: its number, then `WORDS` words of plain prose. */
function longMessage(n: number): string {
  const words = Array.from({ length: WORDS }, (_, i) => VOCABULARY[(i * 7 + n) % VOCABULARY.length]);
  return `turn ${n}: ${words.join(' ')}`;
}

/** The model's window: the fake refuses every request (turns, flush, summarizer) whose prompt plus `max_tokens` passes it. */
const suite = integrationSuite({ fake: { tokenLimit: WINDOW, countMaxTokens: true } });

describe.each(testDatabases())('a 4,000-token local window on $name', (database) => {
  const db = suite.storePerTest(database);

  it('answers 12 turns of 600 words with compactions, every request within the window and its max_tokens', async () => {
    await suite.withWorker(
      db.store,
      { config: { contextWindowTokens: WINDOW }, contextWindowTokens: WINDOW },
      async ({ client, store, fake }) => {
        const first = fake.requests.length;
        fake.respondWith(
          routedResponder((request) =>
            fakeReply.text(`answer ${/turn (\d+):/.exec(lastUserText(request))?.[1] ?? '?'}`),
          ),
        );
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const replies: string[] = [];
        for (let n = 1; n <= TURNS; n++) replies.push((await client.sendMessage(key, longMessage(n))).reply);
        await waitIdle(() => client.getStatus(key));

        expect(replies).toEqual(Array.from({ length: TURNS }, (_, i) => `answer ${i + 1}`));
        const compactions = await store.db
          .selectFrom('compactions')
          .selectAll()
          .where('agent_id', '=', agent)
          .execute();
        expect(compactions.length).toBeGreaterThanOrEqual(1);
        expect(compactions.every((c) => c.status === 'succeeded')).toBe(true);
        const session = await getSession(store.db, agent, key);
        expect(session!.compaction_count).toBe(compactions.length);

        // Every request the model received fit its window with room for the reply it asked for.
        const received: FakeRequest[] = fake.requests.slice(first);
        expect(fake.overflowed.filter((o) => o.request.index >= first)).toEqual([]);
        for (const r of received)
          expect(fakePromptTokens(r.body) + (r.body.max_tokens ?? 0)).toBeLessThanOrEqual(WINDOW);
        // The summarizer wrote the summaries (no extractive fallback) and the flush ran: both fit too.
        expect(received.filter(isSummarizerRequest).length).toBeGreaterThanOrEqual(compactions.length);
        expect(received.filter(isFlushRequest).length).toBeGreaterThanOrEqual(1);
        expect(compactions.filter((c) => c.summarizer_model === null)).toEqual([]);
        // Keel ran the agent lean by itself (smallWindowTokens): the minimal system prompt, no subagent tools.
        const agentRequests = received.filter((r) => !isSummarizerRequest(r));
        expect(agentRequests.filter((r) => JSON.stringify(r.body.system).includes('## Safety'))).toEqual([]);
        expect(
          agentRequests
            .flatMap((r) => (r.body.tools ?? []).map((t) => String(t.name)))
            .filter((name) => name.startsWith('sessions_')),
        ).toEqual([]);
        const turnRequests = agentRequests.filter((r) => !isFlushRequest(r));
        expect(
          turnRequests.every(
            (r) =>
              JSON.stringify(r.body.system).includes('## Tooling') &&
              JSON.stringify(r.body.tools).includes('memory_search'),
          ),
        ).toBe(true);
      },
    );
  }, 300_000);
});
