import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Database } from './schema';
import { decodeEntryRow, type EntryRow } from './entry-row';
import { atRestOf } from '../security/at-rest';
import { MESSAGE_TYPES } from './entries-repo';
import { indexDeferredEntries } from './deferred-search-index';
import { entrySearchText, isRecallEcho } from './entry-search-text';
import { queryTerms } from '../text/search-terms';
import { bm25Score, type Bm25Collection } from '../text/bm25';
import { DEFAULTS } from '../config/defaults';
import { fuseRankings, type FusionOptions, type Ranked } from '../embeddings/rank-fusion';
import { denseQueryText } from '../embeddings/dense-query';
import type { SessionVectorCache } from './session-vector-cache';

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
  /** The dense side, fused with the keywords; absent: keywords only. */
  readonly dense?: DenseSearch;
}

export interface HistoryHit {
  readonly row: EntryRow;
  readonly rank: number;
  /** The message before it in its session, if any (an answer's question). */
  readonly previous?: EntryRow;
  /** The message after it in its session, if any (a question's answer). */
  readonly next?: EntryRow;
}

/** Newest matches kept per common query term (and for all terms together) before ranking. */
const CANDIDATES_PER_TERM = 200;
/** A term held by fewer entries than this is rare: all its matches are candidates, read through the text index. */
const RARE_MATCHES = 1_000;
/**
 * The newest entries read in seq order: they give how common each term is and how densely the scope
 * fills the seq range, and a common term's candidates are its newest matches among them.
 */
const RECENT_ROWS = 5_000;
/** Best-scored candidates read in full, to leave out echoes and duplicates before the limit is taken. */
const POOL_FACTOR = 3;
/** The weight of the question or answer of a turn that searched history: it mostly repeats what it found. */
const RECALL_TURN_WEIGHT = 0.25;
/** The columns of a hit's row: read for the hits themselves and for their neighbours, the same way. */
const ENTRY_COLUMNS = [
  'agent_id',
  'session_id',
  'id',
  'parent_id',
  'off_branch',
  'seq',
  'type',
  'role',
  'payload',
  'token_estimate',
  'byte_size',
  'created_at',
] as const;

/**
 * The entries of `sessionIds` best matching `query`, best first, each with the messages beside it.
 * Imported entries not indexed yet are indexed first.
 */
export async function searchHistory(db: Kysely<Database>, input: HistorySearchInput): Promise<HistoryHit[]> {
  const terms = queryTerms(input.query);
  if ((terms.length === 0 && !input.dense) || input.sessionIds.length === 0) return [];
  await indexDeferredEntries(db, input.agentId, input.sessionIds);
  const keywords =
    terms.length > 0
      ? await keywordRanking(db, input, terms)
      : { ranked: [], onlyCommon: new Set<number>(), commonShare: () => 0 };
  const pool = input.limit * POOL_FACTOR;
  if (!input.dense) return weighedHits(db, input, keywords.ranked, pool);
  const dense = await denseRanking(db, input, input.dense, keywords.commonShare);
  const fusion = { ...DEFAULT_FUSION, ...input.dense.fusion };
  // A keyword match on words most entries hold (the speakers' names) says nothing the dense side should be outvoted by.
  const telling = input.dense.keepCommonMatches
    ? keywords.ranked
    : keywords.ranked.filter((r) => !keywords.onlyCommon.has(r.seq));
  const fused = fuseRankings(telling.slice(0, DEFAULTS.recallCandidates), dense, fusion);
  return weighedHits(db, input, fused, pool);
}

/**
 * The hits shown of a ranking, its candidates read a pool at a time until none left unread could
 * outrank the last hit shown. The question and answer of a turn that searched are weighed down only
 * once read (it takes their neighbours): a hundred earlier questions near the query fill a ranking's
 * head, and cut after one pool they would push the conversation out unread.
 */
async function weighedHits(
  db: Kysely<Database>,
  input: HistorySearchInput,
  ranked: readonly Ranked[],
  pool: number,
): Promise<HistoryHit[]> {
  const readable = ranked.slice(0, Math.max(pool, DEFAULTS.recallCandidates));
  const read: HistoryHit[] = [];
  for (let at = 0; at < readable.length; at += pool) {
    read.push(...(await readWithNeighbours(db, input, readable.slice(at, at + pool))));
    const hits = finalHits(read, input.limit);
    const unread = readable[at + pool];
    if (!unread || (hits.length === input.limit && hits.at(-1)!.rank >= unread.score)) return hits;
  }
  return finalHits(read, input.limit);
}

/** The dense side of a search: how the query is embedded and where the session's vectors are. */
export interface DenseSearch {
  /** The embedding model whose vectors are searched. */
  readonly model: string;
  readonly vectors: SessionVectorCache;
  /** The text's vector, or undefined when the embedder cannot answer now (the search is then by keywords). */
  embedQuery(text: string): Promise<Float32Array | undefined>;
  /** Overrides of the fusion (the recall bench's ablation). */
  readonly fusion?: Partial<FusionOptions>;
  /** Embed the question as asked, names and all (the recall bench's ablation); default: common words left out. */
  readonly keepCommonWords?: boolean;
  /** Fuse keyword matches on common words only too (the recall bench's ablation); default: left out. */
  readonly keepCommonMatches?: boolean;
}

/** Weighted RRF, the dense side at the weight the recall bench measured best; memory search fuses the same way. */
export const DEFAULT_FUSION: FusionOptions = { method: 'rrf', k: DEFAULTS.recallRrfK, denseWeight: 1 };

/** The dense side's candidates, best first; none when the embedder cannot embed the query. */
async function denseRanking(
  db: Kysely<Database>,
  input: HistorySearchInput,
  dense: DenseSearch,
  commonShare: (term: string) => number,
): Promise<Ranked[]> {
  const text = dense.keepCommonWords
    ? input.query
    : denseQueryText(input.query, (term) => commonShare(term) >= DEFAULTS.denseQueryCommonShare);
  const vector = await dense.embedQuery(text);
  if (!vector) return [];
  const scope = { agentId: input.agentId, sessionIds: input.sessionIds, model: dense.model };
  return dense.vectors.nearest(
    db,
    input.from ? { ...scope, from: input.from } : scope,
    vector,
    DEFAULTS.recallCandidates,
  );
}

/**
 * The keyword side: BM25 over the candidates the text indexes find, best first, and the share of
 * the searched entries that hold each query term (estimated from the newest entries).
 */
async function keywordRanking(
  db: Kysely<Database>,
  input: HistorySearchInput,
  terms: readonly string[],
): Promise<{ ranked: Ranked[]; onlyCommon: Set<number>; commonShare: (term: string) => number }> {
  const hashes = atRestOf(db).queryWords(terms);
  const matchers = terms.map((term, i) => termMatch(term, hashes?.[i]));
  const scope = scopeOf(input);
  const sample = await sampleCollection(db, scope, matchers);
  const shares = new Map(terms.map((t, i) => [t, sample.estimatedMatches[i]! / sample.entries]));
  const commonShare = (term: string) => shares.get(term) ?? 0;
  const common = sample.estimatedMatches.map((n) => n >= RARE_MATCHES);
  const candidates = await candidateFeatures(db, scope, matchers, common, sample.estimatedAll >= RARE_MATCHES);
  if (candidates.length === 0) return { ranked: [], onlyCommon: new Set(), commonShare };
  const isCommon = terms.map((t) => commonShare(t) >= DEFAULTS.denseQueryCommonShare);
  const onlyCommon = new Set(candidates.filter((c) => c.matches.every((m, i) => !m || isCommon[i])).map((c) => c.seq));
  const collection: Bm25Collection = {
    entries: sample.entries,
    averageLength: candidates.reduce((sum, c) => sum + c.length, 0) / candidates.length,
    documentFrequency: new Map(
      // A rare term's matches are all candidates: counted exactly. A common one's are estimated from the sample.
      terms.map((t, i) => [
        t,
        Math.max(1, common[i] ? sample.estimatedMatches[i]! : candidates.filter((c) => c.matches[i]).length),
      ]),
    ),
  };
  const ranked = candidates
    .map((c) => ({
      seq: c.seq,
      score: bm25Score(new Map(terms.map((t, i) => [t, c.matches[i] ? 1 : 0])), c.length, collection),
    }))
    .sort((a, b) => b.score - a.score || b.seq - a.seq);
  return { ranked, onlyCommon, commonShare };
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

/** A match flag per term, as SQL selecting one boolean column per term. */
function matchColumns(matchers: readonly TermMatch[]) {
  return sql.join(matchers.map((m, i) => sql`coalesce(${m.sql}, false) as ${sql.ref(`m${i}`)}`));
}

/**
 * In one round trip over the newest entries: how many entries are searched, and how many hold each
 * term, both estimated past the sample by how densely the scope fills the seq range (seq is shared
 * by every session of the table). Below the sample's size both are exact.
 */
async function sampleCollection(db: Kysely<Database>, scope: RawBuilder<boolean>, matchers: readonly TermMatch[]) {
  const flags = sql.join([
    ...matchers.map((_, i) => sql`count(*) filter (where ${sql.ref(`m${i}`)})::int as ${sql.ref(`t${i}`)}`),
    sql`count(*) filter (where ${sql.join(
      matchers.map((_, i) => sql.ref(`m${i}`)),
      sql` and `,
    )})::int as "all"`,
  ]);
  const { rows } = await sql<Record<string, number | string | null>>`
    with newest as (select seq, ${matchColumns(matchers)} from transcript_entries where ${scope} order by seq desc limit ${RECENT_ROWS})
    select count(*)::int as sampled, min(seq) as oldest_sampled, ${flags},
      (select min(seq) from transcript_entries where ${scope}) as first,
      (select max(seq) from transcript_entries where ${scope}) as last
    from newest`.execute(db);
  const row = rows[0]!;
  const sampled = Number(row.sampled);
  // Entries per seq among the newest, stretched over the whole range.
  const scale =
    sampled < RECENT_ROWS
      ? 1
      : (Number(row.last) - Number(row.first) + 1) / Math.max(1, Number(row.last) - Number(row.oldest_sampled) + 1);
  const entries = Math.max(1, Math.round(sampled * scale));
  const estimatedMatches = matchers.map((_, i) => Math.round(Number(row[`t${i}`]) * scale));
  return { entries, estimatedMatches, estimatedAll: Math.round(Number(row.all) * scale) };
}

interface CandidateFeatures {
  readonly seq: number;
  /** Distinct terms in the entry. */
  readonly length: number;
  /** Whether it holds each query term. */
  readonly matches: readonly boolean[];
}

/**
 * The rows worth scoring, with what BM25 needs of each: every match of a rare term (an id, a name)
 * read through the text index, the newest matches of a common one read backwards along the seq
 * index (a few hundred rows, not the million it matches), and the newest rows holding every term.
 */
async function candidateFeatures(
  db: Kysely<Database>,
  scope: RawBuilder<boolean>,
  matchers: readonly TermMatch[],
  common: readonly boolean[],
  allCommon: boolean,
): Promise<CandidateFeatures[]> {
  // A common match's newest rows come from the recent rows, read in seq order whatever the planner
  // guesses of the match (it takes a filter it cannot estimate for rare, and scans the table for it).
  const recent = (match: string) =>
    sql`(select seq from recent where ${sql.ref(match)} order by seq desc limit ${CANDIDATES_PER_TERM})`;
  // `seq + 0` keeps the planner off the seq index for a rare match: the text index finds its few rows.
  const every = (match: RawBuilder<boolean>) =>
    sql`(select seq from transcript_entries where ${scope} and ${match} order by seq + 0 desc limit ${RARE_MATCHES})`;
  const parts = matchers.map((m, i) => (common[i] ? recent(`m${i}`) : every(m.sql)));
  if (matchers.length > 1)
    parts.push(
      allCommon
        ? recent('all')
        : every(
            sql.join(
              matchers.map((m) => m.sql),
              sql` and `,
            ),
          ),
    );
  const all = sql.join(
    matchers.map((_, i) => sql.ref(`m${i}`)),
    sql` and `,
  );
  const { rows } = await sql<Record<string, unknown>>`
    with recent as materialized (
      select m.*, ${all} as "all" from (
        select seq, ${matchColumns(matchers)} from transcript_entries where ${scope} order by seq desc limit ${RECENT_ROWS}) m)
    select seq, coalesce(length(search_vector), cardinality(search_terms), 0)::int as length, ${matchColumns(matchers)}
      from transcript_entries
     -- An array, so the candidates are found first and then read by seq, never by a join over the session.
     where ${scope} and seq = any(array(select seq from (${sql.join(parts, sql` union `)}) candidates))`.execute(db);
  return rows.map((r) => ({
    seq: Number(r.seq),
    length: Number(r.length),
    matches: matchers.map((_, i) => r[`m${i}`] === true),
  }));
}

type NeighbourRow = Omit<Selectable<Database['transcript_entries']>, 'search_vector' | 'search_terms'> & {
  readonly of_seq: string;
  readonly side: 'previous' | 'next';
};

/** The ranked rows in full, each with the message before and after it in its session. */
async function readWithNeighbours(
  db: Kysely<Database>,
  input: HistorySearchInput,
  ranked: readonly Ranked[],
): Promise<HistoryHit[]> {
  if (ranked.length === 0) return [];
  const seqs = ranked.map((r) => r.seq);
  const rows = await db
    .selectFrom('transcript_entries')
    .select(ENTRY_COLUMNS)
    .where('agent_id', '=', input.agentId)
    .where('session_id', 'in', input.sessionIds)
    .where('seq', 'in', seqs)
    .execute();
  const columns = sql.raw(ENTRY_COLUMNS.map((c) => `n.${c}`).join(', '));
  const types = sql.join(MESSAGE_TYPES.map((t) => sql`${t}`));
  const neighbour = (side: 'previous' | 'next') => {
    const [cmp, dir] = side === 'previous' ? [sql.raw('<'), sql.raw('desc')] : [sql.raw('>'), sql.raw('asc')];
    return sql`select h.seq as of_seq, ${side}::text as side, ${columns}
      from transcript_entries h
      cross join lateral (select * from transcript_entries e
        where e.agent_id = h.agent_id and e.session_id = h.session_id and e.seq ${cmp} h.seq and e.type in (${types}) and e.off_branch = h.off_branch
        order by e.seq ${dir} limit 1) n
      where h.agent_id = ${input.agentId} and h.session_id in (${sql.join(input.sessionIds.map((id) => sql`${id}`))}) and h.seq in (${sql.join(seqs.map((s) => sql`${s}`))})`;
  };
  const { rows: around } = await sql<NeighbourRow>`${neighbour('previous')} union all ${neighbour('next')}`.execute(db);
  const bySeq = new Map(
    rows.map((r) => [Number(r.seq), decodeEntryRow({ ...r, search_vector: null, search_terms: null })]),
  );
  const beside = new Map<string, EntryRow>();
  for (const { of_seq, side, ...n } of around)
    beside.set(`${side}:${Number(of_seq)}`, decodeEntryRow({ ...n, search_vector: null, search_terms: null }));
  return ranked.flatMap((r) => {
    const row = bySeq.get(r.seq);
    if (!row) return [];
    const previous = beside.get(`previous:${r.seq}`);
    const next = beside.get(`next:${r.seq}`);
    return [{ row, rank: r.score, ...(previous ? { previous } : {}), ...(next ? { next } : {}) }];
  });
}

/**
 * The hits shown: no recall echoes (rows indexed before echoes were left out of the index), the
 * question and answer of a turn that searched weighed down, one hit per distinct text.
 */
function finalHits(hits: readonly HistoryHit[], limit: number): HistoryHit[] {
  const weighed = hits
    .filter((h) => !isRecallEcho(h.row.payload))
    .map((h) => ({ ...h, rank: isRecallTurnMessage(h) ? h.rank * RECALL_TURN_WEIGHT : h.rank }))
    .sort((a, b) => b.rank - a.rank || Number(b.row.seq) - Number(a.row.seq));
  const seen = new Set<string>();
  const out: HistoryHit[] = [];
  for (const hit of weighed) {
    const text = entrySearchText(hit.row.payload).toLowerCase().replace(/\s+/g, ' ').trim();
    if (text.length === 0 || seen.has(text)) continue;
    seen.add(text);
    out.push(hit);
    if (out.length === limit) break;
  }
  return out;
}

/** A request answered by searching history, or the answer written from what the search found. */
function isRecallTurnMessage(hit: HistoryHit): boolean {
  const followedBySearch = hit.next !== undefined && isRecallEcho(hit.next.payload);
  const writtenFromSearch = hit.previous !== undefined && isRecallEcho(hit.previous.payload);
  return followedBySearch || writtenFromSearch;
}

/**
 * The message beside a hit that completes it, shown with it: the answer to a hit that asks a
 * question, or the question a hit answers. Evidence is often spread over such a pair.
 */
export function answerBeside(hit: HistoryHit): { label: string; row: EntryRow } | undefined {
  const text = entrySearchText(hit.row.payload);
  if (hit.next && text.includes('?') && entrySearchText(hit.next.payload).trim())
    return { label: 'answered by', row: hit.next };
  if (hit.previous && entrySearchText(hit.previous.payload).includes('?'))
    return { label: 'answering', row: hit.previous };
  return undefined;
}
