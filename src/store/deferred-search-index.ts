import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database } from './schema';
import { decodeEntryRows } from './entry-row';
import { entryIndexText } from './entry-search-text';

/** Rows indexed per statement: a big imported session is indexed in bounded steps, each committed. */
const BATCH_ROWS = 2_000;

type EntriesQuery = SelectQueryBuilder<Database, 'transcript_entries', object>;

/** Up to a batch of unindexed rows in `scope`. */
export function deferredRows(db: Kysely<Database>, scope: (qb: EntriesQuery) => EntriesQuery) {
  return (
    scope(db.selectFrom('transcript_entries'))
      .select(['agent_id', 'session_id', 'id', 'type', 'payload'])
      // The predicate of transcript_entries_unindexed_idx, so the planner can read that small index.
      .where('search_vector', 'is', null)
      .where('search_terms', 'is', null)
      // Sealed rows written before history_search existed stay unindexed (the backfill cannot read them).
      .where(sql<boolean>`not (payload ? '$sealed')`)
      .limit(BATCH_ROWS)
  );
}

/**
 * Gives the entries an import wrote with `deferSearchIndex` their search columns, exactly as an
 * insert would have (a `simple` tsvector of `entryIndexText`). Runs before `history_search` reads a
 * session, so a search never misses an imported entry; a session with nothing deferred costs one
 * probe of a partial index per session id. Idempotent, and safe beside another worker doing the
 * same: both write the same value. Rows sealed at rest are never deferred, so never read here.
 * @returns how many rows it indexed.
 */
export async function indexDeferredEntries(
  db: Kysely<Database>,
  agentId: string,
  sessionIds: readonly string[],
): Promise<number> {
  if (sessionIds.length === 0) return 0;
  return indexInBatches(db, (qb) => sessionsDeferredRows(qb, agentId, sessionIds));
}

/**
 * The probe's scope: these sessions' unindexed rows in seq order. The order is what makes PostgreSQL
 * read transcript_entries_unindexed_idx (agent_id, session_id, seq): with a bare LIMIT it may guess
 * that unindexed rows are common (another agent's import) and scan the whole table for none.
 */
export function sessionsDeferredRows(qb: EntriesQuery, agentId: string, sessionIds: readonly string[]): EntriesQuery {
  return qb.where('agent_id', '=', agentId).where('session_id', 'in', sessionIds).orderBy('seq');
}

/**
 * The same for every session of one agent, or of all agents: maintenance runs it, so an imported
 * session is indexed in the background instead of by its first search. Each batch commits on its
 * own, so a run cut short resumes where it stopped.
 */
export async function indexAllDeferredEntries(db: Kysely<Database>, agentId?: string): Promise<number> {
  return indexInBatches(db, (qb) => (agentId === undefined ? qb : qb.where('agent_id', '=', agentId)));
}

async function indexInBatches(db: Kysely<Database>, scope: (qb: EntriesQuery) => EntriesQuery): Promise<number> {
  let indexed = 0;
  for (;;) {
    const rows = await deferredRows(db, scope).execute();
    if (rows.length === 0) {
      if (indexed > 0) await mergePendingSearchIndex(db);
      return indexed;
    }
    const texts = decodeEntryRows(rows).map((r) => entryIndexText(r.payload));
    await sql`
      update transcript_entries t
         set search_vector = to_tsvector('simple', d.text)
        from unnest(${rows.map((r) => r.agent_id)}::text[], ${rows.map((r) => r.session_id)}::text[], ${rows.map((r) => r.id)}::text[], ${texts}::text[]) as d(agent_id, session_id, id, text)
       where t.agent_id = d.agent_id and t.session_id = d.session_id and t.id = d.id`.execute(db);
    indexed += rows.length;
  }
}

/**
 * Merges the text index's pending list into the index proper. A GIN index takes new rows into an
 * unsorted pending list that every search reads through until a vacuum merges it, so after a bulk
 * indexing every search pays for reading the list row by row. A turn's few rows a time can stay
 * pending (fast to write, and autovacuum merges them); a bulk indexing is merged at once. Needs the
 * index's owner: a store whose role does not own it leaves the merge to autovacuum.
 */
export async function mergePendingSearchIndex(db: Kysely<Database>): Promise<void> {
  try {
    await sql`select gin_clean_pending_list('transcript_entries_search_idx'::regclass)`.execute(db);
  } catch (err) {
    if ((err as { code?: string }).code !== '42501') throw err;
  }
}
