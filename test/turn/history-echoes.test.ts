/**
 * history_search used the way an agent uses it, a hundred times over: every turn the model searches
 * for the user's question and answers from what it found. The hundred-and-first search must still
 * find the conversation, not the echoes of the searches before it: no recall tool call or result,
 * nothing of the turn being answered, no text twice. On PGlite and PostgreSQL, plain and sealed at
 * rest (forty times: sealed echoes are stored and found as plain ones are), and with hybrid
 * recall. memory_search ranks the memory notes with the same retriever.
 */
import { randomBytes } from 'node:crypto';
import { integrationSuite } from '../support/integration';
import { freshSchemaUrl, memoryPglite } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { freshDurableAgent, isFlushRequest, isSummarizerRequest, lastUserText } from '../support/durable-turn-helpers';
import { openStore } from '../../src/store/connect';
import { parseKeyRing } from '../../src/security/key-ring';
import type { TranscriptEntry } from '../../src/context/types';
import { startFakeEmbeddings } from '../../src/testing';
import { newRecall } from '../../src/embeddings/recall-runtime';
import { startBackgroundEmbedder } from '../../src/embeddings/background-embedder';
import { configFromEnv } from '../../src/config/keel-config';
import { recordMemoryFlush } from '../../src/store/memory-repo';
import { searchMemory } from '../../src/store/memory-search';
import { DEFAULTS } from '../../src/config/defaults';

const suite = integrationSuite();

const KEYS = `K:${randomBytes(32).toString('base64')}`;
const SEARCHES = 100;
const SEALED_SEARCHES = 40;
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

describe.each(variants)('history_search after many searches on $name', (variant) => {
  afterEach(() => suite.fake.respondWith(undefined));

  // A hundred turns a case: on a shared 2-core machine one has taken two minutes (the timeout is 300 s).
  it.each([
    ['plain rows, a hundred searches', false, false, SEARCHES],
    ['rows sealed at rest, forty searches', true, false, SEALED_SEARCHES],
    ['plain rows, hybrid recall, a hundred searches', false, true, SEARCHES],
  ])(
    'finds the conversation, not its own echoes (%s)',
    async (_name, sealed, hybrid, searches) => {
      const url = await variant.url();
      const atRest = sealed ? { atRest: { ring: parseKeyRing(KEYS), seal: true } } : undefined;
      const store = await openStore(url ? { kind: 'postgres', url, maxConnections: 5 } : memoryPglite(), atRest);
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
        const embeddings = hybrid ? await startFakeEmbeddings() : undefined;
        const config = {
          ...(sealed ? { encryptionKeys: KEYS, encryptAtRest: true } : {}),
          ...(embeddings ? { embeddingsBaseUrl: embeddings.baseUrl, embeddingsModel: embeddings.model } : {}),
        };
        const recall = newRecall();
        // The worker's background embedder, one pass at a time where the test says.
        const embedder = startBackgroundEmbedder(
          { db: store.db, embedders: recall.embedders, configFor: () => configFromEnv({}, config), log: () => {} },
          { loop: false },
        );
        const last = await suite.withWorker(store, { config, deps: { recall } }, async ({ client, fake }) => {
          for (const fact of FACTS) await client.sendMessage(key, fact);
          await embedder.pass();
          for (let i = 0; i < searches; i++) {
            await client.sendMessage(key, `question ${i}: ${QUESTIONS[i % QUESTIONS.length]}?`);
            if (i % 25 === 24) await embedder.pass();
          }
          const before = fake.requests.length;
          await client.sendMessage(key, `question ${searches}: ${QUESTIONS[0]}?`);
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
          .filter((r) => JSON.stringify(r.payload).includes(`question ${searches}:`))
          .map((r) => Number(r.seq))[0]!;
        const shown = [...last.matchAll(/entry (\S+) · /g)].map((m) => m[1]!);
        for (const id of shown) {
          const { seq, entry } = entries.get(id)!;
          // Nothing of the turn being answered.
          expect(seq).toBeLessThan(currentTurnStart);
          if (entry.type !== 'message') continue;
          // No recall tool result, no call that only searched.
          if (entry.message.role === 'toolResult') expect(entry.message.toolName).not.toBe('history_search');
          if (entry.message.role === 'assistant')
            expect(entry.message.content.some((b) => b.type === 'text')).toBe(true);
        }
        // Every hit's text once: no duplicates.
        const hitTexts = hitIds.map((id) => JSON.stringify((entries.get(id)!.entry as { message?: unknown }).message));
        expect(new Set(hitTexts).size).toBe(hitTexts.length);
        if (embeddings) {
          // Every message of the conversation embedded; no search result ever sent to the embedder.
          const vectors = await store.db
            .selectFrom('entry_embeddings')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('agent_id', '=', agent)
            .executeTakeFirstOrThrow();
          expect(Number(vectors.n)).toBeGreaterThan(2 * searches);
          expect(embeddings.embedded.some((t) => t.includes('matching entries, best first'))).toBe(false);
          expect(embeddings.embedded.filter((t) => t.includes('repainted teal'))).toHaveLength(1);
          expect(embeddings.requests.every((r) => r.status === 200)).toBe(true);
          await embeddings.close();
        }
      } finally {
        await store.close();
      }
    },
    300_000,
  );
});

describe.each(variants)("memory_search with history search's retriever on $name", (variant) => {
  afterEach(() => suite.fake.respondWith(undefined));

  it('finds a paraphrased note by its vector, best first, within the result budget', async () => {
    const url = await variant.url();
    const store = await openStore(url ? { kind: 'postgres', url, maxConnections: 5 } : memoryPglite());
    const embeddings = await startFakeEmbeddings({ synonyms: { researching: 'study', looking: 'study' } });
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    const question = 'What has Nadia been researching?';
    try {
      suite.fake.respondWith((r) => {
        if (isSummarizerRequest(r)) return fakeReply.text('Goal: answer questions.');
        if (isFlushRequest(r)) return fakeReply.text('NO_REPLY');
        if (lastToolResult(r) !== undefined) return fakeReply.text('done');
        if (lastUserText(r) === question)
          return fakeReply.toolUse([{ id: 'toolu_m', name: 'memory_search', input: { query: question, limit: 50 } }]);
        return fakeReply.text('noted');
      });
      const config = { embeddingsBaseUrl: embeddings.baseUrl, embeddingsModel: embeddings.model };
      const recall = newRecall();
      const embedder = startBackgroundEmbedder(
        { db: store.db, embedders: recall.embedders, configFor: () => configFromEnv({}, config), log: () => {} },
        { loop: false },
      );
      // Forty notes naming Nadia, and the one that answers in other words, without her name.
      const filler = Array.from(
        { length: 40 },
        (_, i) =>
          `Nadia said the ${['trains', 'gardens', 'tides', 'films'][i % 4]} were fine on day ${i}, and wrote it up at length for the weekly digest the whole team reads on Mondays.`,
      );
      const answer = await suite.withWorker(store, { config, deps: { recall } }, async ({ client, fake }) => {
        await client.sendMessage(key, 'hello');
        const { sessionId } = (await store.db
          .selectFrom('sessions')
          .select('session_id as sessionId')
          .where('agent_id', '=', agent)
          .executeTakeFirstOrThrow()) as { sessionId: string };
        await recordMemoryFlush(store.db, {
          agentId: agent,
          sessionKey: key,
          sessionId,
          flushId: 'f1',
          now: new Date().toISOString(),
          cycle: 0,
          notes: [...filler.slice(0, 20), 'She is looking into tidal power for the harbour.', ...filler.slice(20)],
        });
        expect(await embedder.pass()).toBeGreaterThan(40);
        const before = fake.requests.length;
        await client.sendMessage(key, question);
        return fake.requests
          .slice(before)
          .map(lastToolResult)
          .filter((t) => t !== undefined)
          .at(-1)!;
      });
      const text = (JSON.parse(answer) as Array<{ text: string }>).map((b) => b.text).join('');
      expect(text.split('\n')[0]).toContain('tidal power');
      // Ranked, then cut to the budget, saying so: 41 notes matched, fewer fit.
      expect(Math.ceil(text.length / 4)).toBeLessThanOrEqual(DEFAULTS.recallResultTokens + 60);
      expect(text).toMatch(/\[\d+ more matches left out: memory_search results are kept within 1200 tokens/);
      // What reached the embedder for the query: the question less the name every note holds.
      expect(embeddings.requests.at(-1)!.input).toEqual(['What has been researching?']);
      // By keywords alone the paraphrase is not found at all: the vectors did it.
      const keywordsOnly = await searchMemory(store.db, { agentId: agent, query: question, limit: 5 });
      expect(keywordsOnly.found.map((n) => n.text).join('\n')).not.toContain('tidal power');
    } finally {
      await embeddings.close();
      await store.close();
    }
  });
});
