/**
 * `history_search` latency (issue 18's recall) on one session grown to 10,000 / 100,000 / 1,000,000
 * entries, through `searchHistory` exactly as the tool calls it. Query kinds an agent sends: a ticket
 * id (one row), an order number (a few rows), a customer name (2% of rows), a common word with a rare
 * one, and a word in every row. Baseline in the same run: fetching one entry by id (the floor of any
 * read). Target: p50 ≤ 50 ms at 1M entries. The largest size is measured again beside 3× as many rows
 * (at most 1M) of 20 other sessions with the same vocabulary: a fleet's table holds far more.
 *
 *   npx ts-node --swc bench/history-search.ts       # BENCH_DATABASE_URL=postgres://… (PGlite in memory when unset)
 *
 * Entries are seeded in SQL (generate_series, `to_tsvector` as the insert path computes it), so a
 * million rows take a minute, not an hour. One JSON object on stdout; `run()` returns the same object.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openStore, type Store } from '../src/store/connect';
import { getEntry } from '../src/store/entries-repo';
import { searchHistory } from '../src/store/history-search';
import { indexTerms } from '../src/text/search-terms';
import { mergePendingSearchIndex } from '../src/store/deferred-search-index';
import { latencyStats, ratio, type LatencyStats } from './support/stats';
import { runMain } from './support/run-main';

const DEFAULT_SIZES = [10_000, 100_000, 1_000_000];
const QUICK_SIZES = [10_000, 100_000];
/** Timed searches per query kind and size (after one untimed round); fewer with --quick. */
const ROUNDS = 15;
const QUICK_ROUNDS = 8;
/** What the tool asks for by default. */
const LIMIT = 10;
/** Rows per INSERT … SELECT generate_series. */
const SEED_CHUNK = 50_000;
const TARGET_P50_MS = 50;

const NAMES = [
  'Dubois',
  'Okafor',
  'Nakamura',
  'Lindqvist',
  'Moreau',
  'Haddad',
  'Kowalski',
  'Ferreira',
  'Nguyen',
  'Schmidt',
];
const STATUSES = ['packed', 'shipped', 'delayed', 'returned', 'refunded', 'lost', 'delivered', 'cancelled'];

export interface SearchAtSize {
  readonly entries: number;
  readonly seedSeconds: number;
  /** p50/p99 over every query kind together. */
  readonly all: LatencyStats;
  readonly byKind: Record<string, LatencyStats>;
  /** One entry by id: the floor of a read on the same store. */
  readonly baselineGetEntry: LatencyStats;
  /** all.p50 / baseline p50. */
  readonly ratioP50: number | null;
  readonly meetsTarget: boolean;
}

export interface HistorySearchResult {
  readonly database: 'pglite' | 'postgres';
  readonly targetP50Ms: number;
  readonly sizes: SearchAtSize[];
  /**
   * The largest size again, with 3× as many rows (at most 1M) of other sessions (same vocabulary) in
   * the table, as a fleet's store has: the search must stay scoped to its session.
   */
  readonly besideOtherSessions: SearchAtSize & { readonly otherRows: number; readonly otherSessions: number };
}

/** The other sessions the last measurement shares the table with, and their rows per row of the searched one (capped). */
const OTHER_SESSIONS = 20;
const OTHER_ROWS_PER_ROW = 3;
const MAX_OTHER_ROWS = 1_000_000;

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Query kinds: each returns a query for round `r` at `n` entries seeded. */
const QUERIES: Record<string, (r: number, n: number) => string> = {
  ticketId: (r, n) => `KEEL-${pick(r, n)}`,
  orderNumber: (r, n) => `order #${orderOf(pick(r, n))}`,
  customerName: (r) => `what did ${NAMES[r % NAMES.length]} say`,
  statusAndName: (r) => `${STATUSES[r % STATUSES.length]} ${NAMES[(r + 3) % NAMES.length]}`,
  everyRow: () => 'please check',
};

export async function run(
  opts: { sizes?: number[]; quick?: boolean; databaseUrl?: string } = {},
): Promise<HistorySearchResult> {
  const sizes = opts.sizes ?? (opts.quick ? QUICK_SIZES : DEFAULT_SIZES);
  const url = opts.databaseUrl ?? process.env.BENCH_DATABASE_URL;
  const store = await openStore(url ? { kind: 'postgres', url } : { kind: 'pglite', dataDir: 'memory://' });
  const agentId = `benchhs${randomBytes(4).toString('hex')}`;
  const otherAgentId = `${agentId}-others`;
  const sessionId = `bench-history-${randomBytes(4).toString('hex')}`;
  try {
    // Rows an earlier run deleted are still in the table and its indexes until a vacuum: start clean.
    if (url) await sql`vacuum analyze transcript_entries`.execute(store.db);
    const results: SearchAtSize[] = [];
    let seeded = 0;
    for (const size of sizes) {
      const began = performance.now();
      for (; seeded < size; seeded = Math.min(size, seeded + SEED_CHUNK))
        await seed(store, agentId, sessionId, seeded, Math.min(size, seeded + SEED_CHUNK));
      // The seed is a bulk write; Keel's bulk indexing (an import's) ends by merging the pending list.
      await mergePendingSearchIndex(store.db);
      await sql`analyze transcript_entries`.execute(store.db);
      const seedSeconds = Math.round((performance.now() - began) / 100) / 10;
      log(`history-search: ${size.toLocaleString()} entries (seeded in ${seedSeconds} s); timing…`);
      results.push(await measure(store, agentId, sessionId, size, seedSeconds, opts.quick ? QUICK_ROUNDS : ROUNDS));
    }
    const began = performance.now();
    const per = Math.ceil(Math.min(seeded * OTHER_ROWS_PER_ROW, MAX_OTHER_ROWS) / OTHER_SESSIONS);
    for (let k = 0; k < OTHER_SESSIONS; k++) {
      for (let from = 0; from < per; from += SEED_CHUNK)
        await seed(store, otherAgentId, `${sessionId}-other-${k}`, from, Math.min(per, from + SEED_CHUNK));
    }
    await mergePendingSearchIndex(store.db);
    await sql`analyze transcript_entries`.execute(store.db);
    const seedSeconds = Math.round((performance.now() - began) / 100) / 10;
    log(
      `history-search: ${seeded.toLocaleString()} entries beside ${(per * OTHER_SESSIONS).toLocaleString()} of ${OTHER_SESSIONS} other sessions (seeded in ${seedSeconds} s); timing…`,
    );
    const beside = await measure(store, agentId, sessionId, seeded, seedSeconds, opts.quick ? QUICK_ROUNDS : ROUNDS);
    return {
      database: url ? 'postgres' : 'pglite',
      targetP50Ms: TARGET_P50_MS,
      sizes: results,
      besideOtherSessions: { ...beside, otherRows: per * OTHER_SESSIONS, otherSessions: OTHER_SESSIONS },
    };
  } finally {
    if (url) await store.db.deleteFrom('transcript_entries').where('agent_id', 'in', [agentId, otherAgentId]).execute();
    await store.close();
  }
}

async function measure(
  store: Store,
  agentId: string,
  sessionId: string,
  n: number,
  seedSeconds: number,
  rounds: number,
): Promise<SearchAtSize> {
  const byKind: Record<string, number[]> = Object.fromEntries(Object.keys(QUERIES).map((k) => [k, []]));
  const base: number[] = [];
  for (let r = -1; r < rounds; r++) {
    for (const [kind, query] of Object.entries(QUERIES)) {
      const t0 = performance.now();
      const hits = await searchHistory(store.db, {
        agentId,
        sessionIds: [sessionId],
        query: query(r + 1, n),
        limit: LIMIT,
      });
      if (r >= 0) byKind[kind]!.push(performance.now() - t0);
      if (hits.length === 0) throw new Error(`history-search: ${kind} query found nothing`);
    }
    const t0 = performance.now();
    await getEntry(store.db, agentId, sessionId, `hs-${pick(r + 1, n)}`);
    if (r >= 0) base.push(performance.now() - t0);
  }
  const all = latencyStats(Object.values(byKind).flat());
  const baselineGetEntry = latencyStats(base);
  return {
    entries: n,
    seedSeconds,
    all,
    byKind: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, latencyStats(v)])),
    baselineGetEntry,
    ratioP50: ratio(all.p50, baselineGetEntry.p50),
    meetsTarget: all.p50 <= TARGET_P50_MS,
  };
}

/** Entries `from`…`to - 1`: one user message each, with a ticket id, an order number, a name and a status. */
export async function seed(store: Store, agentId: string, sessionId: string, from: number, to: number): Promise<void> {
  const array = (words: readonly string[]) => sql.raw(`array[${words.map((s) => `'${s}'`).join(',')}]`);
  const names = array(NAMES);
  const statuses = array(STATUSES);
  // The index holds each entry's search terms, as the insert path computes them from the same text.
  const terms = (text: string) => indexTerms(text).join(' ');
  const indexed = sql.lit(`${terms('Turn')} %s ${terms('please check order')} %s %s ${terms('ticket KEEL')} %s %s`);
  const nameTerms = array(NAMES.map(terms));
  const statusTerms = array(STATUSES.map(terms));
  await sql`
    insert into transcript_entries (agent_id, session_id, id, type, role, payload, token_estimate, byte_size, created_at, search_vector)
    select ${agentId}, ${sessionId}, 'hs-' || i, 'message', 'user',
      jsonb_build_object('type', 'message', 'id', 'hs-' || i, 'parentId', null, 'timestamp', to_char(now(), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'message', jsonb_build_object('role', 'user', 'content', t.text)),
      length(t.text) / 4, length(t.text) + 120, now(),
      to_tsvector('simple', format(${indexed}, i, t.order_no, (${nameTerms})[1 + i % ${NAMES.length}], i, (${statusTerms})[1 + (i / 7) % ${STATUSES.length}]))
    from generate_series(${from}::int, ${to - 1}::int) i,
    lateral (select 10000 + (i::bigint * 7919) % 90000 as order_no) o,
    lateral (select format('Turn %s: please check order #%s for %s; ticket KEEL-%s is %s.',
      i, o.order_no, (${names})[1 + i % ${NAMES.length}], i, (${statuses})[1 + (i / 7) % ${STATUSES.length}]) as text, o.order_no) t
  `.execute(store.db);
}

/** A seeded entry number for round `r`, spread over the session. */
function pick(r: number, n: number): number {
  return (r * 7_368_787) % n;
}

function orderOf(i: number): number {
  return 10_000 + ((i * 7919) % 90_000);
}

export function ratioLines(r: HistorySearchResult): string[] {
  const line = (s: SearchAtSize, where: string) =>
    `history_search at ${s.entries.toLocaleString()} entries${where} (${r.database}): p50 ${s.all.p50} ms, p99 ${s.all.p99} ms vs one entry by id p50 ${s.baselineGetEntry.p50} ms = ${s.ratioP50}× (target p50 ≤ ${r.targetP50Ms} ms: ${s.meetsTarget ? 'met' : 'NOT met'}); by kind p50: ${Object.entries(
      s.byKind,
    )
      .map(([k, v]) => `${k} ${v.p50}`)
      .join(', ')}`;
  const b = r.besideOtherSessions;
  return [
    ...r.sizes.map((s) => line(s, '')),
    line(b, `, beside ${b.otherRows.toLocaleString()} rows of ${b.otherSessions} other sessions`),
  ];
}

if (require.main === module)
  runMain('history-search', () => run({ quick: process.argv.includes('--quick') }), ratioLines);
