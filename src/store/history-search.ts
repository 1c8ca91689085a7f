import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, EntryRow } from './schema';
import type { TranscriptEntry } from '../context/types';
import { atRestOf } from './at-rest';
import { MESSAGE_TYPES } from './entries-repo';
import { indexDeferredEntries } from './deferred-search-index';
import { entrySearchText, isRecallEcho } from './entry-search-text';
import { queryTerms } from '../text/search-terms';
import { bm25Score, type Bm25Collection } from '../text/bm25';

/**
 * `history_search`'s ranking: BM25 over the stemmed terms of each entry, the same on PostgreSQL, on
 * PGlite and for rows sealed at rest (their terms are blind-index hashes). The database finds a
 * bounded set of candidates through its text indexes and reports each one's term counts and length;
 * the score is computed here. Echoes of earlier searches never rank: the recall tools' calls and
 * results are not hits, and the question and answer of a turn that searched weigh less.
 */

export interface HistorySearchInput {
  readonly agentId: string;
  readonly sessionIds: readonly string[];
  readonly query: string;
  readonly limit: number;
  /** Entries of this session from this seq on are left out: the turn being answered, which the model has. */
  readonly from?: { readonly sessionId: string; readonly seq: number };
}

export interface HistoryHit {
  readonly row: EntryRow;
  readonly rank: number;
  /** The message before it in its session, if any (an answer's question). */
  readonly previous?: EntryRow;
  /** The message after it in its session, if any (a question's answer). */
  readonly next?: EntryRow;
}

/** Newest matches kept per query term (and for all terms together) before ranking. */
const CANDIDATES_PER_TERM = 200;
/** A term with fewer matches than this is rare: all its matches are candidates, read through the text index. */
const RARE_MATCHES = 1_000;
/** Matches counted per term for its IDF: past it the term is common, and its exact count barely moves the score. */
const DOCUMENT_FREQUENCY_CAP = 5_000;
/** Entries counted for the collection size; past it the size is extrapolated from how densely the session fills the seq range. */
const COLLECTION_COUNT_CAP = 10_000;
/** Best-scored candidates read in full, to leave out echoes and duplicates before the limit is taken. */
const POOL_FACTOR = 4;
/** The weight of the question or answer of a turn that searched history: it mostly repeats what it found. */
const RECALL_TURN_WEIGHT = 0.25;

/**
 * The entries of `sessionIds` best matching `query`, best first, each with the messages beside it.
 * Imported entries not indexed yet are indexed first.
 */
export async function searchHistory(db: Kysely<Database>, input: HistorySearchInput): Promise<HistoryHit[]> {
  const terms = queryTerms(input.query);
  if (terms.length === 0 || input.sessionIds.length === 0) return [];
  await indexDeferredEntries(db, input.agentId, input.sessionIds);
  const hashes = atRestOf(db).queryWords(terms);
  const matchers = terms.map((term, i) => termMatch(term, hashes?.[i]));
  const scope = scopeOf(input);
  const stats = await collectionStatistics(db, scope, matchers);
  const candidates = candidateSeqs(scope, matchers, stats.matches);
  if (!candidates) return [];
  const counted = await termCounts(db, scope, candidates, terms, hashes);
  const collection: Bm25Collection = {
    entries: stats.entries,
    averageLength: counted.reduce((sum, c) => sum + c.length, 0) / Math.max(1, counted.length),
    documentFrequency: new Map(terms.map((t, i) => [t, Math.max(1, stats.matches[i]!)])),
  };
  const ranked = counted
    .map((c) => ({ seq: c.seq, score: bm25Score(c.counts, c.length, collection) }))
    .sort((a, b) => b.score - a.score || b.seq - a.seq)
    .slice(0, input.limit * POOL_FACTOR);
  return finalHits(await readWithNeighbours(db, input, ranked), input.limit);
}

/** One query term's match: its tsvector lexeme, or for sealed rows any of its hashes (one per key). */
interface TermMatch {
  readonly term: string;
  readonly sql: RawBuilder<boolean>;
}

function termMatch(term: string, hashes: readonly string[] | undefined): TermMatch {
  const plain = sql<boolean>`search_vector @@ plainto_tsquery('simple', ${term})`;
  if (!hashes || hashes.length === 0) return { term, sql: plain };
  return { term, sql: sql<boolean>`(${plain} or search_terms && ${hashes}::text[])` };
}

/** The rows searched: the key's sessions, less the turn being answered. */
function scopeOf(input: HistorySearchInput): RawBuilder<boolean> {
  const sessions = sql`agent_id = ${input.agentId} and session_id in (${sql.join(input.sessionIds.map((id) => sql`${id}`))})`;
  if (!input.from) return sql<boolean>`${sessions}`;
  return sql<boolean>`${sessions} and not (session_id = ${input.from.sessionId} and seq >= ${input.from.seq})`;
}

/**
 * In one round trip: how many entries hold each term (up to a cap) and how many entries are searched.
 * The collection size is counted up to a cap too; past it, the entries per seq among the newest
 * stand for the whole seq range (seq is shared by every session of the table).
 */
async function collectionStatistics(db: Kysely<Database>, scope: RawBuilder<boolean>, matchers: readonly TermMatch[]) {
  const count = (where: RawBuilder<boolean>, cap: number) => sql<number>`(select count(*)::int from (select 1 from transcript_entries where ${scope} and ${where} limit ${cap}) m)`;
  const row = (await db
    .selectNoFrom([
      ...matchers.map((m, i) => count(m.sql, DOCUMENT_FREQUENCY_CAP).as(`t${i}`)),
      count(sql<boolean>`true`, COLLECTION_COUNT_CAP).as('counted'),
      sql<string | null>`(select min(seq) from transcript_entries where ${scope})`.as('first'),
      sql<string | null>`(select max(seq) from transcript_entries where ${scope})`.as('last'),
      sql<string | null>`(select seq from transcript_entries where ${scope} order by seq desc offset ${COLLECTION_COUNT_CAP - 1} limit 1)`.as('nth'),
    ])
    .executeTakeFirstOrThrow()) as Record<string, number | string | null>;
  const matches = matchers.map((_, i) => Number(row[`t${i}`]));
  const counted = Number(row.counted);
  let entries = counted;
  if (counted >= COLLECTION_COUNT_CAP && row.nth !== null) {
    const span = Number(row.last) - Number(row.first) + 1;
    const newestSpan = Number(row.last) - Number(row.nth) + 1;
    entries = Math.round((counted * span) / Math.max(1, newestSpan));
  }
  return { matches, entries: Math.max(entries, ...matches) };
}

/**
 * The rows worth scoring: every match of a rare term (an id, a name) read through the text index,
 * and the newest matches of a common one read backwards along the session's seq index (a few hundred
 * rows, not the million it matches), plus the newest rows holding every term.
 */
function candidateSeqs(scope: RawBuilder<boolean>, matchers: readonly TermMatch[], matches: readonly number[]): RawBuilder<number> | undefined {
  const parts = matchers.flatMap((m, i) => {
    const n = matches[i]!;
    if (n === 0) return [];
    // `seq + 0` keeps the planner off the seq index for a rare term: the text index finds its few rows.
    const order = n < RARE_MATCHES ? sql`seq + 0` : sql`seq`;
    const limit = n < RARE_MATCHES ? RARE_MATCHES : CANDIDATES_PER_TERM;
    return [sql`(select seq from transcript_entries where ${scope} and ${m.sql} order by ${order} desc limit ${limit})`];
  });
  if (parts.length === 0) return undefined;
  if (matchers.length > 1) {
    const all = sql.join(matchers.map((m) => m.sql), sql` and `);
    parts.push(sql`(select seq from transcript_entries where ${scope} and ${all} order by seq desc limit ${CANDIDATES_PER_TERM})`);
  }
  return sql<number>`(select seq from (${sql.join(parts, sql` union `)}) candidates)`;
}

interface CountedCandidate {
  readonly seq: number;
  readonly length: number;
  readonly counts: Map<string, number>;
}

/** Each candidate's length in terms and how often it holds each query term (positions of a tsvector, repeats of sealed hashes). */
async function termCounts(
  db: Kysely<Database>,
  scope: RawBuilder<boolean>,
  candidates: RawBuilder<number>,
  terms: readonly string[],
  hashes: readonly (readonly string[])[] | undefined,
): Promise<CountedCandidate[]> {
  const termOfHash = new Map<string, string>();
  hashes?.forEach((hs, i) => hs.forEach((h) => termOfHash.set(h, terms[i]!)));
  const { rows } = await sql<{ seq: string; length: number | null; matched: string[] | null }>`
    select seq,
      case when search_vector is not null
        then (select coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::int from unnest(search_vector))
        else coalesce(array_length(search_terms, 1), 0) end as length,
      case when search_vector is not null
        then (select array_agg(lexeme || ' ' || coalesce(array_length(positions, 1), 1)) from unnest(search_vector) where lexeme = any(${terms}::text[]))
        else (select array_agg(t) from unnest(search_terms) t where t = any(${[...termOfHash.keys()]}::text[])) end as matched
      from transcript_entries
     where ${scope} and seq in ${candidates}`.execute(db);
  return rows.map((r) => {
    const counts = new Map<string, number>();
    for (const m of r.matched ?? []) {
      const space = m.lastIndexOf(' ');
      const term = space >= 0 ? m.slice(0, space) : termOfHash.get(m);
      if (term === undefined) continue;
      counts.set(term, (counts.get(term) ?? 0) + (space >= 0 ? Number(m.slice(space + 1)) : 1));
    }
    return { seq: Number(r.seq), length: Number(r.length ?? 0), counts };
  });
}

type RankedSeq = { readonly seq: number; readonly score: number };
type NeighbourRow = EntryRow & { readonly of_seq: string; readonly side: 'previous' | 'next' };

/** The ranked rows in full, each with the message before and after it in its session. */
async function readWithNeighbours(db: Kysely<Database>, input: HistorySearchInput, ranked: readonly RankedSeq[]): Promise<HistoryHit[]> {
  if (ranked.length === 0) return [];
  const seqs = ranked.map((r) => r.seq);
  const rows = await db
    .selectFrom('transcript_entries')
    .select(['agent_id', 'session_id', 'id', 'parent_id', 'seq', 'type', 'role', 'payload', 'token_estimate', 'byte_size', 'created_at'])
    .where('agent_id', '=', input.agentId)
    .where('session_id', 'in', input.sessionIds)
    .where('seq', 'in', seqs)
    .execute();
  const columns = sql.raw(['agent_id', 'session_id', 'id', 'parent_id', 'seq', 'type', 'role', 'payload', 'token_estimate', 'byte_size', 'created_at'].map((c) => `n.${c}`).join(', '));
  const types = sql.join(MESSAGE_TYPES.map((t) => sql`${t}`));
  const neighbour = (side: 'previous' | 'next') => {
    const [cmp, dir] = side === 'previous' ? [sql.raw('<'), sql.raw('desc')] : [sql.raw('>'), sql.raw('asc')];
    return sql`select h.seq as of_seq, ${side}::text as side, ${columns}
      from transcript_entries h
      cross join lateral (select * from transcript_entries e
        where e.agent_id = h.agent_id and e.session_id = h.session_id and e.seq ${cmp} h.seq and e.type in (${types})
        order by e.seq ${dir} limit 1) n
      where h.agent_id = ${input.agentId} and h.seq in (${sql.join(seqs.map((s) => sql`${s}`))})`;
  };
  const { rows: around } = await sql<NeighbourRow>`${neighbour('previous')} union all ${neighbour('next')}`.execute(db);
  const bySeq = new Map(rows.map((r) => [Number(r.seq), { ...r, search_vector: null, search_terms: null } as EntryRow]));
  const beside = new Map<string, EntryRow>();
  for (const { of_seq, side, ...n } of around) beside.set(`${side}:${Number(of_seq)}`, { ...n, search_vector: null, search_terms: null } as EntryRow);
  return ranked.flatMap((r) => {
    const row = bySeq.get(r.seq);
    if (!row) return [];
    const previous = beside.get(`previous:${r.seq}`);
    const next = beside.get(`next:${r.seq}`);
    return [{ row, rank: r.score, ...(previous ? { previous } : {}), ...(next ? { next } : {}) }];
  });
}

const payloadOf = (row: EntryRow) => row.payload as unknown as TranscriptEntry;

/**
 * The hits shown: no recall echoes (rows indexed before echoes were left out of the index), the
 * question and answer of a turn that searched weighed down, one hit per distinct text.
 */
function finalHits(hits: readonly HistoryHit[], limit: number): HistoryHit[] {
  const weighed = hits
    .filter((h) => !isRecallEcho(payloadOf(h.row)))
    .map((h) => ({ ...h, rank: isRecallTurnMessage(h) ? h.rank * RECALL_TURN_WEIGHT : h.rank }))
    .sort((a, b) => b.rank - a.rank || Number(b.row.seq) - Number(a.row.seq));
  const seen = new Set<string>();
  const out: HistoryHit[] = [];
  for (const hit of weighed) {
    const text = entrySearchText(payloadOf(hit.row)).toLowerCase().replace(/\s+/g, ' ').trim();
    if (text.length === 0 || seen.has(text)) continue;
    seen.add(text);
    out.push(hit);
    if (out.length === limit) break;
  }
  return out;
}

/** A request answered by searching history, or the answer written from what the search found. */
function isRecallTurnMessage(hit: HistoryHit): boolean {
  const followedBySearch = hit.next !== undefined && isRecallEcho(payloadOf(hit.next));
  const writtenFromSearch = hit.previous !== undefined && isRecallEcho(payloadOf(hit.previous));
  return followedBySearch || writtenFromSearch;
}
