/**
 * Hybrid `history_search` latency on one session of 100,000 entries, each with a 384-dimension vector
 * (all-MiniLM-L6-v2's size), through `searchHistory` with the dense side exactly as the tool calls it:
 * the worker's vector cache, read once, then a dot product over the session per search. The query's
 * vector is given (the embedder's own time is left out: a CPU-served small model takes a few ms per
 * query, a hosted one a network round trip). Baseline in the same run: the same searches by keywords
 * only. Target: p50 ≤ 50 ms at 100k entries.
 *
 *   npm run bench -- recall-scale          # BENCH_DATABASE_URL=postgres://… (PGlite in memory when unset)
 *
 * Entries are seeded as bench/history-search.ts seeds them; vectors are seeded random unit vectors.
 * One JSON object on stdout; `run()` returns the same object.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openStore } from '../src/store/connect';
import { searchHistory, type DenseSearch } from '../src/store/history-search';
import { writeVectors } from '../src/store/embeddings-repo';
import { mergePendingSearchIndex } from '../src/store/deferred-search-index';
import { SessionVectorCache } from '../src/store/session-vector-cache';
import { DEFAULTS } from '../src/config/defaults';
import { seed } from './history-search';
import { latencyStats, ratio, type LatencyStats } from './support/stats';
import { runMain } from './support/run-main';

const ENTRIES = 100_000;
const QUICK_ENTRIES = 20_000;
const DIMENSIONS = 384;
const ROUNDS = 40;
const SEED_CHUNK = 50_000;
const VECTOR_CHUNK = 1_000;
const TARGET_P50_MS = 50;
const MODEL = 'bench-random-384';
const QUERIES = ['what did Dubois say', 'shipped Okafor', 'please check', 'KEEL-4242', 'order #12345'];

export interface RecallScaleResult {
  readonly database: 'pglite' | 'postgres';
  readonly entries: number;
  readonly dimensions: number;
  readonly targetP50Ms: number;
  /** The first hybrid search: it reads the session's vectors into the worker's cache. */
  readonly coldMs: number;
  readonly hybrid: LatencyStats;
  readonly keywordsOnly: LatencyStats;
  /** hybrid p50 / keywords-only p50. */
  readonly ratioP50: number | null;
  readonly meetsTarget: boolean;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

export async function run(opts: { quick?: boolean; databaseUrl?: string } = {}): Promise<RecallScaleResult> {
  const entries = opts.quick ? QUICK_ENTRIES : ENTRIES;
  const url = opts.databaseUrl ?? process.env.BENCH_DATABASE_URL;
  const store = await openStore(url ? { kind: 'postgres', url } : { kind: 'pglite', dataDir: 'memory://' });
  const agentId = `benchrs${randomBytes(4).toString('hex')}`;
  const sessionId = `bench-recall-scale-${randomBytes(4).toString('hex')}`;
  try {
    const began = performance.now();
    for (let from = 0; from < entries; from += SEED_CHUNK)
      await seed(store, agentId, sessionId, from, Math.min(entries, from + SEED_CHUNK));
    await mergePendingSearchIndex(store.db);
    const random = seededRandom(7);
    const seqs = await store.db
      .selectFrom('transcript_entries')
      .select('seq')
      .where('agent_id', '=', agentId)
      .orderBy('seq')
      .execute();
    for (let i = 0; i < seqs.length; i += VECTOR_CHUNK) {
      const rows = seqs.slice(i, i + VECTOR_CHUNK).map((r) => ({
        entry: { agentId, sessionId, seq: Number(r.seq), entry: undefined as never },
        vector: unitVector(random),
      }));
      await writeVectors(store.db, MODEL, rows);
    }
    // As autovacuum leaves a table at rest: the vector count per search is answered from the key's index.
    await sql`${sql.raw(url ? 'vacuum analyze' : 'analyze')} entry_embeddings`.execute(store.db);
    await sql`analyze transcript_entries`.execute(store.db);
    log(
      `recall-scale: ${entries.toLocaleString()} entries and vectors seeded in ${Math.round((performance.now() - began) / 1000)} s; timing…`,
    );
    const vectors = new SessionVectorCache(DEFAULTS.recallCachedScopes);
    const queryVector = unitVector(random);
    const dense: DenseSearch = { model: MODEL, vectors, embedQuery: async () => queryVector };
    const search = (query: string, withDense: boolean) =>
      searchHistory(store.db, { agentId, sessionIds: [sessionId], query, limit: 10, ...(withDense ? { dense } : {}) });
    let t0 = performance.now();
    await search(QUERIES[0]!, true);
    const coldMs = Math.round(performance.now() - t0);
    const hybrid: number[] = [];
    const keywords: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const query = QUERIES[r % QUERIES.length]!;
      t0 = performance.now();
      await search(query, true);
      hybrid.push(performance.now() - t0);
      t0 = performance.now();
      await search(query, false);
      keywords.push(performance.now() - t0);
    }
    const hybridStats = latencyStats(hybrid);
    const keywordStats = latencyStats(keywords);
    return {
      database: url ? 'postgres' : 'pglite',
      entries,
      dimensions: DIMENSIONS,
      targetP50Ms: TARGET_P50_MS,
      coldMs,
      hybrid: hybridStats,
      keywordsOnly: keywordStats,
      ratioP50: ratio(hybridStats.p50, keywordStats.p50),
      meetsTarget: hybridStats.p50 <= TARGET_P50_MS,
    };
  } finally {
    if (url) {
      await store.db.deleteFrom('entry_embeddings').where('agent_id', '=', agentId).execute();
      await store.db.deleteFrom('transcript_entries').where('agent_id', '=', agentId).execute();
    }
    await store.close();
  }
}

export function ratioLines(r: RecallScaleResult): string[] {
  return [
    `hybrid history_search at ${r.entries.toLocaleString()} entries × ${r.dimensions} dimensions (${r.database}): p50 ${r.hybrid.p50} ms, p99 ${r.hybrid.p99} ms vs keywords only p50 ${r.keywordsOnly.p50} ms = ${r.ratioP50}×; first search (fills the cache) ${r.coldMs} ms (target p50 ≤ ${r.targetP50Ms} ms: ${r.meetsTarget ? 'met' : 'NOT met'})`,
  ];
}

/** A deterministic generator in [0, 1) (mulberry32), so every run seeds the same vectors. */
function seededRandom(seedValue: number): () => number {
  let a = seedValue;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unitVector(random: () => number): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i++) norm += (v[i] = random() - 0.5) ** 2;
  norm = Math.sqrt(norm);
  for (let i = 0; i < DIMENSIONS; i++) v[i]! /= norm;
  return v;
}

if (require.main === module)
  runMain('recall-scale', () => run({ quick: process.argv.includes('--quick') }), ratioLines);
