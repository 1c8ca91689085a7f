import { sql, type Kysely } from 'kysely';
import type { Database } from './schema';

/** Rows indexed per statement: a big table is backfilled in short transactions, not one long lock. */
const BATCH_ROWS = 5_000;

/**
 * Gives plain entries written before history_search their tsvector (migration
 * `2026_11_24_005_history_search`; part of it, so change it only as a migration would change).
 * The text is a best-effort SQL extraction from the payload: every `text` field, a summary,
 * tool-call arguments; capped like insert-time indexing. Sealed rows cannot be read in SQL and stay
 * unindexed; new rows are indexed at insert time from their plaintext.
 */
export async function backfillSearchVectors(db: Kysely<Database>): Promise<void> {
  for (;;) {
    const r = await sql`
      update transcript_entries t
         set search_vector = to_tsvector('simple', left(coalesce((
           select string_agg(v #>> '{}', ' ')
             from jsonb_path_query(t.payload, 'lax $.** ? (@.type() == "object").text') v
         ), '') || ' ' || coalesce(t.payload ->> 'summary', '') || ' ' || coalesce((
           select string_agg(coalesce(b -> 'arguments', b -> 'input')::text, ' ')
             from jsonb_array_elements(case when jsonb_typeof(t.payload #> '{message,content}') = 'array' then t.payload #> '{message,content}' else '[]'::jsonb end) b
         ), ''), 20000))
       where (t.agent_id, t.session_id, t.id) in (
         select agent_id, session_id, id from transcript_entries
          where search_vector is null and search_terms is null and not (payload ? '$sealed')
          limit ${sql.lit(BATCH_ROWS)})`.execute(db);
    if (Number(r.numAffectedRows ?? 0) === 0) return;
  }
}
