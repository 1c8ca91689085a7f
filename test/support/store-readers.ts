/** Readers tests use to inspect what a run left in the store; turns never read whole sessions. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/store/schema';
import { decodeEntryRows, type EntryRow } from '../../src/store/entry-row';

/** Every entry of a session in order (audits in tests). */
export async function allEntries(db: Kysely<Database>, agentId: string, sessionId: string): Promise<EntryRow[]> {
  const rows = await db
    .selectFrom('transcript_entries')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'asc')
    .execute();
  return decodeEntryRows(rows);
}

/** Count of compaction entries of a session. */
export async function countCompactionEntries(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
): Promise<number> {
  const r = await db
    .selectFrom('transcript_entries')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('type', '=', 'compaction')
    .executeTakeFirstOrThrow();
  return r.n;
}
