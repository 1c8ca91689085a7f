import type { Kysely } from 'kysely';
import type { Database, SessionRow } from './schema';
import { entryRows, redactEntries, type EntryToAppend, type RedactedAppendResult } from './entries-repo';
import { turnUsageSet, type TurnUsageUpdate } from './sessions-repo';

/**
 * Appends a turn's final reply (redacted) and adds the turn's usage to its session row in one
 * statement: the counters move if and only if the reply row is new, so a model call retried after
 * its reply was stored counts nothing twice. `session` is the row after the update; undefined when
 * the reply was already there (the attempt that stored it counted the turn).
 */
export async function appendFinalReplyRecordingUsage(
  db: Kysely<Database>,
  sessionId: string,
  item: EntryToAppend,
  usage: TurnUsageUpdate,
): Promise<RedactedAppendResult & { session?: SessionRow }> {
  const { redacted, redactions } = redactEntries([item]);
  const session = await db
    .with('appended', (qb) =>
      qb
        .insertInto('transcript_entries')
        .values(entryRows(db, usage.agentId, sessionId, redacted))
        .onConflict((oc) => oc.columns(['agent_id', 'session_id', 'id']).doNothing())
        .returning('id'),
    )
    .updateTable('sessions')
    .set((eb) => turnUsageSet(eb, usage))
    .where('agent_id', '=', usage.agentId)
    .where('session_key', '=', usage.sessionKey)
    .where((eb) => eb.exists(eb.selectFrom('appended').select('appended.id')))
    .returningAll()
    .executeTakeFirst();
  return { inserted: session ? 1 : 0, redactions, ...(session ? { session } : {}) };
}
