import { sql, type Kysely } from 'kysely';
import type { Database, EntryRow } from './schema';
import type { CompactionEntry } from '../context/types';
import { atRestOf } from './at-rest';
import { MESSAGE_TYPES } from './entries-repo';
import { searchWords } from '../security/blind-index';
import { indexDeferredEntries } from './deferred-search-index';

/**
 * Reads behind `history_search` and `history_expand`: the transcript of one session key, every
 * compaction epoch and every session id of it that the store can name. Always scoped by agent id.
 */

export interface HistoryHit {
  readonly row: EntryRow;
  readonly rank: number;
}

/**
 * Entries of `sessionIds` matching any word of `query` (imported entries not indexed yet are indexed first), best first (plain rows by `ts_rank` of their
 * tsvector among bounded candidates, see `candidateSeqs`; sealed rows by the share of query words
 * their blind index holds), then newest first.
 */
export async function searchHistory(
  db: Kysely<Database>,
  input: { agentId: string; sessionIds: readonly string[]; query: string; limit: number },
): Promise<HistoryHit[]> {
  const words = searchWords(input.query);
  if (words.length === 0 || input.sessionIds.length === 0) return [];
  // What an import wrote without its index is indexed before it is searched.
  await indexDeferredEntries(db, input.agentId, input.sessionIds);
  const tsquery = sql.join(
    words.map((w) => sql`plainto_tsquery('simple', ${w})`),
    sql` || `,
  );
  const blind = atRestOf(db).queryWords(words);
  const hashes = blind?.flat() ?? [];
  const sealedRank =
    hashes.length > 0
      ? sql<number>`(select count(*) from unnest(search_terms) t where t = any(${hashes}::text[]))::float4 / ${words.length}`
      : sql<number>`0::float4`;
  const candidates = hashes.length > 0 ? undefined : await candidateSeqs(db, input, words);
  if (hashes.length === 0 && !candidates) return [];
  const rows = await db
    .selectFrom('transcript_entries')
    .selectAll()
    .select(sql<number>`case when search_vector is not null then ts_rank(search_vector, ${tsquery}) else ${sealedRank} end`.as('rank'))
    .where('agent_id', '=', input.agentId)
    .where('session_id', 'in', input.sessionIds)
    .where((eb) => {
      const plain = sql<boolean>`search_vector @@ (${tsquery})`;
      if (hashes.length > 0) return eb.or([eb(plain, '=', true), eb('search_terms', '&&', sql<string[]>`${hashes}::text[]`)]);
      // Plain rows: rank a bounded candidate set (each matched already), not every row a common word matches.
      return eb('seq', 'in', candidates!);
    })
    .orderBy('rank', 'desc')
    .orderBy('seq', 'desc')
    .limit(input.limit)
    .execute();
  return rows.map(({ rank, search_vector: _v, search_terms: _t, ...row }) => ({ row: { ...row, search_vector: null, search_terms: null }, rank: Number(rank) }));
}

/** Newest matches kept per query word (and for all words together) before ranking. */
const CANDIDATES_PER_WORD = 200;
/** A word with fewer matches than this is rare: all its matches are read through the text index. */
const RARE_MATCHES = 1_000;

/**
 * The rows worth ranking: the newest matches of all the words together, and the newest matches of
 * each word on its own. A rare word (an id, a name) brings every row it is in, read through the text
 * index; a common word brings its newest rows, read backwards along the session's seq index (a few
 * hundred rows, not the million it matches). One probe first counts, up to `RARE_MATCHES`, which is which.
 */
async function candidateSeqs(db: Kysely<Database>, input: { agentId: string; sessionIds: readonly string[] }, words: readonly string[]) {
  const scope = sql`agent_id = ${input.agentId} and session_id in (${sql.join(input.sessionIds.map((id) => sql`${id}`))})`;
  const each = words.map((w) => sql`plainto_tsquery('simple', ${w})`);
  const queries = [...(words.length > 1 ? [sql.join(each, sql` && `)] : []), ...each];
  const counts = await db
    .selectNoFrom(queries.map((q, i) => sql<number>`(select count(*)::int from (select 1 from transcript_entries where ${scope} and search_vector @@ (${q}) limit ${RARE_MATCHES}) m)`.as(`q${i}`)))
    .executeTakeFirstOrThrow();
  const parts = queries.flatMap((q, i) => {
    const n = Number((counts as Record<string, number>)[`q${i}`]);
    if (n === 0) return [];
    // `seq + 0` keeps the planner off the seq index for a rare word: the text index finds its few rows.
    const order = n < RARE_MATCHES ? sql`seq + 0` : sql`seq`;
    return [sql`(select seq from transcript_entries where ${scope} and search_vector @@ (${q}) order by ${order} desc limit ${CANDIDATES_PER_WORD})`];
  });
  return parts.length === 0 ? undefined : sql<number>`(select seq from (${sql.join(parts, sql` union `)}) candidates)`;
}

/** A compaction of a session and the seq range it summarized (`[fromSeq, toSeq)`). */
export interface CompactionSpan {
  readonly id: string;
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** Every compaction of a session in order, with the range each summarized. */
export async function compactionSpans(db: Kysely<Database>, agentId: string, sessionId: string): Promise<CompactionSpan[]> {
  const rows = await db
    .selectFrom('transcript_entries')
    .select(['id', 'seq', 'payload'])
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('type', '=', 'compaction')
    .orderBy('seq', 'asc')
    .execute();
  const keptIds = rows.map((r) => (r.payload as unknown as CompactionEntry).firstKeptEntryId).filter((id) => id !== undefined);
  const kept =
    keptIds.length === 0
      ? []
      : await db
          .selectFrom('transcript_entries')
          .select(['id', 'seq'])
          .where('agent_id', '=', agentId)
          .where('session_id', '=', sessionId)
          .where('id', 'in', keptIds)
          .execute();
  const seqOf = new Map(kept.map((k) => [k.id, Number(k.seq)]));
  const spans: CompactionSpan[] = [];
  let fromSeq = 0;
  for (const r of rows) {
    const entry = r.payload as unknown as CompactionEntry;
    const toSeq = seqOf.get(entry.firstKeptEntryId) ?? Number(r.seq);
    if (entry.revertOf !== undefined || entry.rangeOf !== undefined) {
      // A revert or an applied rerun stands for an earlier compaction's range (none: it restored no summary).
      const same = entry.rangeOf !== undefined ? spans.find((s) => s.id === entry.rangeOf) : undefined;
      spans.push({ id: r.id, fromSeq: same?.fromSeq ?? toSeq, toSeq: same?.toSeq ?? toSeq });
    } else spans.push({ id: r.id, fromSeq: Math.min(fromSeq, toSeq), toSeq });
    fromSeq = toSeq;
  }
  return spans;
}

/** The model-visible entries of a session in `[fromSeq, toSeq)`, oldest first, at most `limit`. */
export async function messagesInRange(
  db: Kysely<Database>,
  input: { agentId: string; sessionId: string; fromSeq: number; toSeq: number; limit: number },
): Promise<EntryRow[]> {
  return db
    .selectFrom('transcript_entries')
    .selectAll()
    .where('agent_id', '=', input.agentId)
    .where('session_id', '=', input.sessionId)
    .where('seq', '>=', input.fromSeq)
    .where('seq', '<', input.toSeq)
    .where('type', 'in', MESSAGE_TYPES)
    .orderBy('seq', 'asc')
    .limit(input.limit)
    .execute();
}

/** The seq range of `before` model-visible entries before `seq` through `after` after it (inclusive of it). */
export async function rangeAround(
  db: Kysely<Database>,
  input: { agentId: string; sessionId: string; seq: number; before: number; after: number },
): Promise<{ fromSeq: number; toSeq: number }> {
  const base = db
    .selectFrom('transcript_entries')
    .select('seq')
    .where('agent_id', '=', input.agentId)
    .where('session_id', '=', input.sessionId)
    .where('type', 'in', MESSAGE_TYPES);
  const earlier = await base.where('seq', '<', input.seq).orderBy('seq', 'desc').offset(Math.max(0, input.before - 1)).limit(1).executeTakeFirst();
  const later = await base.where('seq', '>', input.seq).orderBy('seq', 'asc').offset(Math.max(0, input.after - 1)).limit(1).executeTakeFirst();
  const fromSeq = input.before === 0 ? input.seq : earlier ? Number(earlier.seq) : 0;
  const toSeq = input.after === 0 || !later ? (input.after === 0 ? input.seq + 1 : Number.MAX_SAFE_INTEGER) : Number(later.seq) + 1;
  return { fromSeq, toSeq };
}
