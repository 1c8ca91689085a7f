/**
 * Hybrid recall on the store, against the strict fake embeddings server: a paraphrase found that
 * keywords miss, entries without vectors still found by keywords, the backfill in bounded batches
 * through an embedder that goes down midway, a model change, sealed rows, and the in-worker vector
 * search against a plain reference ranking. On PGlite, and on PostgreSQL with TEST_DATABASE_URL
 * (without pgvector: the portable column is the only vector path).
 */
import { randomBytes } from 'node:crypto';
import { freshSchemaUrl, testDatabases, memoryPglite } from '../support/databases';
import { announcedSeed } from '../support/test-seed';
import { prng } from '../fixtures/generate';
import { appendEntries, type EntryToAppend } from '../../src/store/entries-repo';
import { searchHistory } from '../../src/store/history-search';
import { entriesWithoutVectors, vectorCoverage } from '../../src/store/embeddings-repo';
import { SessionVectorCache } from '../../src/store/session-vector-cache';
import { backfillVectors, BackfillStoppedError } from '../../src/embeddings/backfill-vectors';
import { Embedder } from '../../src/embeddings/embedder';
import { denseSearchFor, newRecall } from '../../src/embeddings/recall-runtime';
import { recallSetting } from '../../src/embeddings/recall-setting';
import { configFromEnv } from '../../src/config/keel-config';
import { startFakeEmbeddings, type FakeEmbeddings } from '../../src/testing';
import { openStore, type Store } from '../../src/store/connect';
import { parseKeyRing } from '../../src/security/key-ring';

const T0 = Date.UTC(2026, 0, 1);
const line = (id: string, i: number, text: string, role: 'user' | 'assistant' = 'user'): EntryToAppend => ({
  entry: {
    type: 'message',
    id,
    parentId: null,
    timestamp: new Date(T0 + i * 1000).toISOString(),
    message:
      role === 'user'
        ? { role: 'user', content: text, timestamp: T0 + i * 1000 }
        : {
            role: 'assistant',
            content: [{ type: 'text', text }],
            stopReason: 'stop',
            model: 'm',
            usage: { input: 0, output: 0, totalTokens: 0 } as never,
            timestamp: T0 + i * 1000,
          },
  },
  tokenEstimate: 5,
});
const agentName = () => `a${randomBytes(4).toString('hex')}`;
const TOPICS = ['weather', 'trains', 'coffee', 'gardens', 'music', 'bikes', 'cooking', 'films', 'books', 'tides'];

describe.each(testDatabases())('hybrid recall on $name', (database) => {
  let store: Store;
  let fake: FakeEmbeddings;
  beforeAll(async () => {
    store = await database.open();
    fake = await startFakeEmbeddings({ synonyms: { researching: 'study', looking: 'study' } });
  });
  afterAll(async () => {
    await fake.close();
    await store.close();
  });
  const hybridConfig = () => configFromEnv({}, { embeddingsBaseUrl: fake.baseUrl, embeddingsModel: fake.model });

  it('finds a paraphrase that keywords miss, and entries without vectors by their keywords', async () => {
    const agentId = agentName();
    const filler = Array.from({ length: 30 }, (_, i) =>
      line(`f${i}`, i, `Nadia said the ${TOPICS[i % TOPICS.length]} were fine on day ${i}`),
    );
    await appendEntries(store.db, agentId, 's1', [
      ...filler,
      line('target', 40, 'I have been looking into tidal power'),
    ]);
    const recall = newRecall();
    const dense = denseSearchFor(recall, hybridConfig())!;
    await backfillVectors({ db: store.db, embedder: recall.embedders.for(fake.endpoint), agentId });
    // Stored after the backfill: no vector yet, found by keywords alone.
    await appendEntries(store.db, agentId, 's1', [line('late', 50, 'the kiln rota is settled')]);

    const query = 'What has Nadia been researching?';
    const keywordsOnly = await searchHistory(store.db, { agentId, sessionIds: ['s1'], query, limit: 5 });
    expect(keywordsOnly.map((h) => h.row.id)).not.toContain('target');
    const hybrid = await searchHistory(store.db, { agentId, sessionIds: ['s1'], query, limit: 5, dense });
    // Keyword matches on the name alone do not outvote it.
    expect(hybrid[0]!.row.id).toBe('target');
    const denseOnly = { ...dense, fusion: { method: 'dense' as const } };
    expect(
      (await searchHistory(store.db, { agentId, sessionIds: ['s1'], query, limit: 5, dense: denseOnly }))[0]!.row.id,
    ).toBe('target');
    // What reached the embedder for the query: the question less the name every line holds.
    expect(fake.requests.at(-1)!.input).toEqual(['What has been researching?']);

    const late = await searchHistory(store.db, { agentId, sessionIds: ['s1'], query: 'kiln rota', limit: 3, dense });
    expect(late[0]!.row.id).toBe('late');
    expect(await vectorCoverage(store.db, agentId, ['s1'], fake.model)).toEqual({ entries: 32, withVectors: 31 });
  });

  it('backfills in batches within the limit, goes on after the embedder fails midway, and embeds each entry once', async () => {
    const agentId = agentName();
    await appendEntries(
      store.db,
      agentId,
      's1',
      Array.from({ length: 150 }, (_, i) => line(`e${i}`, i, `entry number ${i} about ${TOPICS[i % 10]}`)),
    );
    const embedder = new Embedder(fake.endpoint);
    const before = fake.embedded.length;
    fake.downAfter(1);
    const stopped = await backfillVectors({ db: store.db, embedder, agentId, maxFailures: 0 }).catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(BackfillStoppedError);
    expect((stopped as BackfillStoppedError).report.embedded).toBe(64);
    expect((stopped as Error).message).toMatch(/after 64 entries .*HTTP 503.*run it again to go on/);
    expect(embedder.breaker.ready()).toBe(false);
    expect(await rawVectorCount(store, agentId)).toBe(64);

    fake.up();
    embedder.breaker.succeeded();
    const done = await backfillVectors({ db: store.db, embedder, agentId });
    expect(done).toMatchObject({ embedded: 86, left: 0 });
    expect(await rawVectorCount(store, agentId)).toBe(150);
    // Each entry's text went out once, in requests within the batch limit.
    const sent = fake.embedded.slice(before);
    expect(sent).toHaveLength(150);
    expect(new Set(sent).size).toBe(150);
    expect(fake.requests.every((r) => r.status !== 400)).toBe(true);
    expect(await backfillVectors({ db: store.db, embedder, agentId })).toMatchObject({ embedded: 0 });
  });

  it('re-embeds into a new model’s space, and refuses a new size under the same name', async () => {
    const agentId = agentName();
    await appendEntries(store.db, agentId, 's1', [
      line('m1', 1, 'the lantern is teal'),
      line('m2', 2, 'the audit goes to Okonkwo'),
    ]);
    await backfillVectors({ db: store.db, embedder: new Embedder(fake.endpoint), agentId });
    const other = await startFakeEmbeddings({ model: `other-${agentId}`, dimensions: 16 });
    try {
      const embedder = new Embedder(other.endpoint);
      expect(await entriesWithoutVectors(store.db, { agentId, model: other.model, limit: 10 })).toHaveLength(2);
      expect(await backfillVectors({ db: store.db, embedder, agentId })).toMatchObject({ embedded: 2 });
      const models = await store.db
        .selectFrom('entry_embeddings')
        .select(['model', (eb) => eb.fn.countAll<string>().as('n')])
        .where('agent_id', '=', agentId)
        .groupBy('model')
        .orderBy('model')
        .execute();
      expect(models.map((m) => [m.model, Number(m.n)])).toEqual([
        [fake.model, 2],
        [other.model, 2],
      ]);
      const dense = denseSearchFor(
        newRecall(),
        configFromEnv({}, { embeddingsBaseUrl: other.baseUrl, embeddingsModel: other.model }),
      )!;
      const hits = await searchHistory(store.db, {
        agentId,
        sessionIds: ['s1'],
        query: 'teal lantern',
        limit: 2,
        dense,
      });
      expect(hits[0]!.row.id).toBe('m1');

      other.setDimensions(24);
      await appendEntries(store.db, agentId, 's1', [line('m3', 3, 'a third line')]);
      const refused = await backfillVectors({ db: store.db, embedder, agentId }).catch((e: unknown) => e);
      expect((refused as Error).message).toMatch(
        /answered 24-dimension vectors, but its vectors here have 16.*KEEL_EMBEDDINGS_MODEL/,
      );
      expect(await entriesWithoutVectors(store.db, { agentId, model: other.model, limit: 10 })).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('ranks in the worker exactly as a plain cosine ranking does, also after older entries are embedded late', async () => {
    const seed = announcedSeed('RECALL_SEED', 'vector ranking');
    const rand = prng(seed);
    const agentId = agentName();
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`);
    const texts = Array.from({ length: 300 }, () =>
      Array.from({ length: 6 }, () => words[Math.floor(rand() * words.length)]).join(' '),
    );
    await appendEntries(
      store.db,
      agentId,
      's1',
      texts.map((t, i) => line(`r${i}`, i, t)),
    );
    const embedder = new Embedder(fake.endpoint);
    const cache = new SessionVectorCache(4);
    const scope = { agentId, sessionIds: ['s1'], model: fake.model };
    const seqs = await store.db
      .selectFrom('transcript_entries')
      .select(['id', 'seq'])
      .where('agent_id', '=', agentId)
      .execute();
    const seqOf = new Map(seqs.map((r) => [r.id, Number(r.seq)]));
    const reference = (query: string, embeddedIds: readonly string[]) => {
      const q = fake.vectorOf(query);
      return embeddedIds
        .map((id) => {
          const v = fake.vectorOf(texts[Number(id.slice(1))]!);
          return { seq: seqOf.get(id)!, score: v.reduce((s, x, i) => s + x * q[i]!, 0) };
        })
        .sort((a, b) => b.score - a.score)
        .slice(0, 10)
        .map((r) => r.seq);
    };
    const nearest = async (query: string) =>
      (await cache.nearest(store.db, scope, Float32Array.from(fake.vectorOf(query)), 10)).map((r) => r.seq);

    // The newest 64 first (as the background embedder goes), searched; then the older ones.
    await embedEntriesOnce(store, embedder, agentId);
    const newest = texts.map((_, i) => `r${i}`).slice(-64);
    for (let q = 0; q < 10; q++) {
      const query = `${words[q]} ${words[q + 7]}`;
      expect(await nearest(query)).toEqual(reference(query, newest));
    }
    await backfillVectors({ db: store.db, embedder, agentId });
    const every = texts.map((_, i) => `r${i}`);
    for (let q = 0; q < 20; q++) {
      const query = `${words[q]} ${words[(q * 7) % 60]} ${words[(q * 13) % 60]}`;
      expect(await nearest(query)).toEqual(reference(query, every));
    }
  });

  it('never embeds rows sealed at rest, and says dense recall is off with encryption at rest', async () => {
    const keys = `K:${randomBytes(32).toString('base64')}`;
    const atRest = { atRest: { ring: parseKeyRing(keys), seal: true } };
    const sealed =
      database.name === 'pglite'
        ? await openStore(memoryPglite(), atRest)
        : await openStore(
            { kind: 'postgres', url: await freshSchemaUrl(process.env.TEST_DATABASE_URL!), maxConnections: 2 },
            atRest,
          );
    const db = sealed.db;
    const agentId = agentName();
    try {
      await appendEntries(db, agentId, 's1', [
        line('s1', 1, 'the vault code is 4411'),
        line('s2', 2, 'and the door is red'),
      ]);
      const requests = fake.requests.length;
      expect(await backfillVectors({ db, embedder: new Embedder(fake.endpoint), agentId })).toMatchObject({
        embedded: 0,
        left: 0,
      });
      expect(fake.requests.length).toBe(requests);
      expect(await db.selectFrom('entry_embeddings').selectAll().execute()).toEqual([]);
      const setting = recallSetting(
        configFromEnv(
          {},
          { embeddingsBaseUrl: fake.baseUrl, embeddingsModel: fake.model, encryptAtRest: true, encryptionKeys: keys },
        ),
      );
      expect(setting).toMatchObject({
        mode: 'keywords',
        why: expect.stringMatching(/KEEL_ENCRYPT_AT_REST.*dense recall is off/),
      });
      expect(
        denseSearchFor(
          newRecall(),
          configFromEnv(
            {},
            { encryptAtRest: true, encryptionKeys: keys, embeddingsBaseUrl: fake.baseUrl, embeddingsModel: fake.model },
          ),
        ),
      ).toBeUndefined();
    } finally {
      await sealed.close();
    }
  });
});

async function rawVectorCount(store: Store, agentId: string): Promise<number> {
  const row = await store.db
    .selectFrom('entry_embeddings')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('agent_id', '=', agentId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One batch, as one pass of the background embedder takes it. */
async function embedEntriesOnce(store: Store, embedder: Embedder, agentId: string): Promise<void> {
  const { embedEntries } = await import('../../src/embeddings/embed-entries');
  const batch = await entriesWithoutVectors(store.db, { agentId, model: embedder.model, limit: 64 });
  await embedEntries(store.db, embedder, batch);
}
