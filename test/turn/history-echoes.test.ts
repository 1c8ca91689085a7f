/**
 * history_search used the way an agent uses it, a hundred times over: every turn the model searches
 * for the user's question and answers from what it found. The hundred-and-first search must still
 * find the conversation, not the echoes of the searches before it: no recall tool call or result,
 * nothing of the turn being answered, no text twice. On PGlite and PostgreSQL, plain and sealed at rest.
 */
import { randomBytes } from 'node:crypto';
import { integrationSuite } from '../support/integration';
import { freshSchemaUrl } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { freshDurableAgent, isFlushRequest, isSummarizerRequest, lastUserText } from '../support/durable-turn-helpers';
import { openStore } from '../../src/store/connect';
import { parseKeyRing } from '../../src/security/key-ring';
import type { TranscriptEntry } from '../../src/context/types';

const suite = integrationSuite();

const KEYS = `K:${randomBytes(32).toString('base64')}`;
const SEARCHES = 100;
const variants: Array<{ name: string; url: () => Promise<string | undefined> }> = [
  { name: 'PGlite', url: async () => undefined },
];
if (process.env.TEST_DATABASE_URL)
  variants.push({ name: 'PostgreSQL', url: () => freshSchemaUrl(process.env.TEST_DATABASE_URL!) });

/** What the user told the agent before the questions began, one fact a turn. */
const FACTS = [
  'The harbour lantern was repainted teal in March by Ingrid, our facilities lead.',
  'We decided the quarterly audit goes to Okonkwo from now on.',
  'My sister Maja moved to Porto last spring and runs a bakery there.',
  'The staging database password rotates every Tuesday at noon.',
];
/** Questions asked in turn, each reworded with its number: later ones share every word with earlier ones. */
const QUESTIONS = [
  'what colour is the harbour lantern now',
  'who runs the quarterly audit',
  'where did Maja move',
  'when does the staging database password rotate',
];

/** The text of the tool result a request ends with, if it ends with one. */
function lastToolResult(r: FakeRequest): string | undefined {
  const last = r.body.messages?.at(-1);
  if (!last || typeof last.content === 'string') return undefined;
  const block = last.content.find((b: { type: string }) => b.type === 'tool_result');
  return block ? JSON.stringify(block.content) : undefined;
}

describe.each(variants)('history_search after a hundred searches on $name', (variant) => {
  afterEach(() => suite.fake.respondWith(undefined));

  it.each([
    ['plain rows', false],
    ['rows sealed at rest', true],
  ])('finds the conversation, not its own echoes (%s)', async (_name, sealed) => {
    const url = await variant.url();
    const atRest = sealed ? { atRest: { ring: parseKeyRing(KEYS), seal: true } } : undefined;
    const store = await openStore(
      url ? { kind: 'postgres', url, maxConnections: 5 } : { kind: 'pglite', dataDir: 'memory://' },
      atRest,
    );
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    try {
      suite.fake.respondWith((r) => {
        if (isSummarizerRequest(r)) return fakeReply.text('Goal: answer questions.');
        if (isFlushRequest(r)) return fakeReply.text('NO_REPLY');
        const question = lastUserText(r);
        const found = lastToolResult(r);
        // After the search: answer by quoting what it found (an echo a careless index would find next time).
        if (question.startsWith('question') && found !== undefined)
          return fakeReply.text(`From history: ${found.slice(0, 400)}`);
        if (question.startsWith('question'))
          return fakeReply.toolUse([{ id: `toolu_q${r.index}`, name: 'history_search', input: { query: question } }]);
        return fakeReply.text('noted');
      });
      const config = sealed ? { encryptionKeys: KEYS, encryptAtRest: true } : {};
      const last = await suite.withWorker(store, { config }, async ({ client, fake }) => {
        for (const fact of FACTS) await client.sendMessage(key, fact);
        for (let i = 0; i < SEARCHES; i++)
          await client.sendMessage(key, `question ${i}: ${QUESTIONS[i % QUESTIONS.length]}?`);
        const before = fake.requests.length;
        await client.sendMessage(key, `question ${SEARCHES}: ${QUESTIONS[0]}?`);
        return fake.requests
          .slice(before)
          .map(lastToolResult)
          .filter((t) => t !== undefined)
          .at(-1)!;
      });

      const rows = await store.db
        .selectFrom('transcript_entries')
        .select(['id', 'seq', 'payload'])
        .where('agent_id', '=', agent)
        .orderBy('seq')
        .execute();
      const entries = new Map(
        rows.map((r) => [r.id, { seq: Number(r.seq), entry: r.payload as unknown as TranscriptEntry }]),
      );
      const hitIds = [...last.matchAll(/- entry (\S+) ·/g)].map((m) => m[1]!);
      expect(hitIds.length).toBeGreaterThan(0);
      // The fact asked about ranks first, its answer-worthy words found by stem ("colour ... lantern").
      const factId = rows.find((r) => JSON.stringify(r.payload).includes('repainted teal'))!.id;
      expect(hitIds[0]).toBe(factId);

      const currentTurnStart = rows
        .filter((r) => JSON.stringify(r.payload).includes(`question ${SEARCHES}:`))
        .map((r) => Number(r.seq))[0]!;
      const shown = [...last.matchAll(/entry (\S+) · /g)].map((m) => m[1]!);
      for (const id of shown) {
        const { seq, entry } = entries.get(id)!;
        // Nothing of the turn being answered.
        expect(seq).toBeLessThan(currentTurnStart);
        if (entry.type !== 'message') continue;
        // No recall tool result, no call that only searched.
        if (entry.message.role === 'toolResult') expect(entry.message.toolName).not.toBe('history_search');
        if (entry.message.role === 'assistant') expect(entry.message.content.some((b) => b.type === 'text')).toBe(true);
      }
      // Every hit's text once: no duplicates.
      const hitTexts = hitIds.map((id) => JSON.stringify((entries.get(id)!.entry as { message?: unknown }).message));
      expect(new Set(hitTexts).size).toBe(hitTexts.length);
    } finally {
      await store.close();
    }
  });
});
