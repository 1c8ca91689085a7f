/**
 * The parts of hybrid recall that need no database: rank fusion, what the dense side embeds of a
 * question, the result's token budget, keyword ranking in memory, the breaker's backoff, and the embeddings client against the strict fake (its limits,
 * its errors, and the typed errors Keel makes of them).
 */
import { fuseRankings } from '../../src/embeddings/rank-fusion';
import { denseQueryText } from '../../src/embeddings/dense-query';
import { EmbedderBreaker } from '../../src/embeddings/embedder-breaker';
import { Embedder } from '../../src/embeddings/embedder';
import { embedTexts, EmbedderUnavailableError, EmbeddingsRequestError } from '../../src/embeddings/embeddings-client';
import { startFakeEmbeddings, type FakeEmbeddings } from '../../src/testing';
import { configFromEnv } from '../../src/config/keel-config';
import { recallSetting } from '../../src/embeddings/recall-setting';
import { fitHits, leftOutNote } from '../../src/context/recall-result-budget';
import { rankTexts } from '../../src/text/rank-texts';

describe('fuseRankings', () => {
  const keywords = [
    { seq: 1, score: 9 },
    { seq: 2, score: 5 },
  ];
  const dense = [
    { seq: 3, score: 0.9 },
    { seq: 1, score: 0.8 },
  ];
  it.each([
    ['rrf: found by both first, then by rank on one side, ties to the newer', 'rrf', 1, [1, 3, 2]],
    ['rrf with the dense side weighed down', 'rrf', 0.1, [1, 2, 3]],
    ['keywords alone', 'keywords', 1, [1, 2]],
    ['dense alone', 'dense', 1, [3, 1]],
  ] as const)('%s', (_name, method, denseWeight, expected) => {
    expect(fuseRankings(keywords, dense, { method, k: 60, denseWeight }).map((r) => r.seq)).toEqual(expected);
  });
  it('is the keyword ranking when the dense side found nothing (the embedder down)', () => {
    expect(fuseRankings(keywords, [], { method: 'rrf', k: 60, denseWeight: 1 })).toEqual(keywords);
  });
});

describe('denseQueryText', () => {
  it.each([
    [
      'leaves out the words most entries hold',
      'What did Caroline research?',
      ['carolin', 'caroline'],
      'What did research?',
    ],
    ['keeps every word when none is common', 'Where did Maja move?', [], 'Where did Maja move?'],
    ['keeps the question when every word is common', 'Caroline', ['carolin', 'caroline'], 'Caroline'],
  ])('%s', (_name, query, common, expected) => {
    expect(denseQueryText(query, (t) => common.includes(t))).toBe(expected);
  });
});

describe('EmbedderBreaker', () => {
  it('doubles its wait per failure up to the cap, honours a longer Retry-After, opens, and closes on success', () => {
    let now = 0;
    const breaker = new EmbedderBreaker(() => now, { first: 1_000, max: 4_000 }, 3);
    expect(breaker.ready()).toBe(true);
    const waits = [1, 2, 3, 4].map(() => {
      breaker.failed(new Error('down'));
      return breaker.waitMs();
    });
    expect(waits).toEqual([1_000, 2_000, 4_000, 4_000]);
    expect(breaker.open).toBe(true);
    expect(breaker.describe()).toMatch(/failing \(4 in a row, next try in 4 s\): down/);
    breaker.failed(new EmbedderUnavailableError(429, 30_000, 'slow down'));
    expect(breaker.waitMs()).toBe(30_000);
    now += 30_000;
    expect(breaker.ready()).toBe(true);
    breaker.succeeded();
    expect(breaker.open).toBe(false);
    expect(breaker.describe()).toBe('embedder answering');
  });
});

describe('the embeddings client against the strict fake', () => {
  let fake: FakeEmbeddings;
  beforeAll(async () => {
    fake = await startFakeEmbeddings({ maxBatch: 4, apiKey: 'sk-test', dimensions: 8 });
  });
  afterAll(() => fake.close());

  it('sends the OpenAI request shape and gets unit vectors back in order', async () => {
    const vectors = await embedTexts(fake.endpoint, ['alpha beta', 'gamma']);
    expect(fake.requests.at(-1)).toEqual({ model: fake.model, input: ['alpha beta', 'gamma'], status: 200 });
    expect(vectors.map((v) => v.length)).toEqual([8, 8]);
    expect(Math.hypot(...vectors[0]!)).toBeCloseTo(1, 5);
    expect([...vectors[1]!].map((x) => +x.toFixed(5))).toEqual(fake.vectorOf('gamma').map((x) => +x.toFixed(5)));
  });

  it('splits texts into batches within the limit', async () => {
    const before = fake.requests.length;
    const texts = Array.from({ length: 10 }, (_, i) => `text ${i}`);
    const vectors = await new Embedder(fake.endpoint, 4).embed(texts);
    expect(vectors).toHaveLength(10);
    expect(fake.requests.slice(before).map((r) => (r.input as string[]).length)).toEqual([4, 4, 2]);
  });

  it('turns refusals into errors a caller acts on: retry later, or fix the request', async () => {
    const tooMany = embedTexts(fake.endpoint, ['a', 'b', 'c', 'd', 'e']);
    await expect(tooMany).rejects.toBeInstanceOf(EmbeddingsRequestError);
    await expect(tooMany).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/at most 4 are allowed/),
    });
    await expect(embedTexts({ ...fake.endpoint, apiKey: 'wrong' }, ['a'])).rejects.toMatchObject({
      name: 'EmbeddingsRequestError',
      status: 401,
    });
    await expect(embedTexts({ ...fake.endpoint, model: 'nope' }, ['a'])).rejects.toMatchObject({ status: 404 });
    fake.rateLimit(1, 7);
    await expect(embedTexts(fake.endpoint, ['a'])).rejects.toMatchObject({
      name: 'EmbedderUnavailableError',
      status: 429,
      retryAfterMs: 7_000,
    });
    fake.down();
    await expect(embedTexts(fake.endpoint, ['a'])).rejects.toMatchObject({
      name: 'EmbedderUnavailableError',
      status: 503,
    });
    fake.up();
    await expect(embedTexts({ ...fake.endpoint, baseUrl: 'http://127.0.0.1:1/v1' }, ['a'])).rejects.toBeInstanceOf(
      EmbedderUnavailableError,
    );
  });
});

describe('recall settings', () => {
  it('is keywords only without an endpoint, naming the variables to set', () => {
    expect(recallSetting(configFromEnv({}))).toMatchObject({
      mode: 'keywords',
      why: expect.stringContaining('KEEL_EMBEDDINGS_BASE_URL and KEEL_EMBEDDINGS_MODEL'),
    });
  });
  it('is hybrid with an endpoint and model from the environment', () => {
    const config = configFromEnv({
      KEEL_EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1',
      KEEL_EMBEDDINGS_MODEL: 'nomic-embed-text',
      KEEL_EMBEDDINGS_API_KEY: 'k',
    });
    expect(recallSetting(config)).toEqual({
      mode: 'hybrid',
      endpoint: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'nomic-embed-text', apiKey: 'k' },
    });
  });
  it('refuses an endpoint without its model, naming the variable', () => {
    expect(() => configFromEnv({ KEEL_EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1' })).toThrow(
      /KEEL_EMBEDDINGS_MODEL/,
    );
  });
});

describe('fitHits', () => {
  const hit = (chars: number, alone?: number) => ({
    full: 'f'.repeat(chars),
    ...(alone !== undefined ? { alone: 'a'.repeat(alone) } : {}),
  });
  it.each([
    ['every hit in full when all fit', [hit(40), hit(40)], 20, ['f', 'f'], 0],
    ['a hit alone when in full it does not fit', [hit(40), hit(400, 20)], 20, ['f', 'a'], 0],
    ['a long hit left out so a shorter one below it fits', [hit(40), hit(400), hit(20)], 20, ['f', 'f'], 1],
    ['the first hit cut to the budget when it alone is larger', [hit(400), hit(8)], 20, ['f'], 1],
  ] as const)('%s', (_name, hits, budget, kinds, leftOut) => {
    const fitted = fitHits(hits, budget);
    expect(fitted.texts.map((t) => t[0])).toEqual(kinds);
    expect(fitted.leftOut).toBe(leftOut);
    expect(fitted.tokens).toBeLessThanOrEqual(budget);
  });

  it('names the guard, its figure and what to do when it left hits out', () => {
    expect(leftOutNote(0, 1200, 'memory_search')).toBe('');
    expect(leftOutNote(3, 1200, 'memory_search')).toBe(
      '\n[3 more matches left out: memory_search results are kept within 1200 tokens (recallResultTokens); search with more specific words to see them]',
    );
  });
});

describe('rankTexts', () => {
  it('ranks by BM25 over stems, rarer terms first, leaving out texts holding no term', () => {
    const texts = ['we went to Porto in May', 'the kiln is hot', 'Porto and Lisbon', 'going to Porto, going home'];
    const { ranked, share } = rankTexts(texts, 'go Porto');
    expect(ranked.map((r) => r.index)).toEqual([3, 0, 2]);
    expect(ranked[2]!.terms).toEqual(['porto']);
    expect(share('porto')).toBe(0.75);
  });
});
