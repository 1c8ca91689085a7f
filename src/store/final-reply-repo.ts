import type { Kysely } from 'kysely';
import type { Database, SessionRow } from './schema';
import {
  entryInsertRow,
  entryValues,
  redactEntries,
  type EntryToAppend,
  type EntryValues,
  type RedactedAppendResult,
} from './entries-repo';
import { turnUsageSet, turnUsageValues, type TurnUsageUpdate, type TurnUsageValues } from './sessions-repo';
import { compiledOnce } from './compiled-once';

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
  const [session] = await appendAndCount(db, {
    ...entryValues(db, usage.agentId, sessionId, redacted[0]!),
    sessionKey: usage.sessionKey,
    ...turnUsageValues(usage),
  });
  return { inserted: session ? 1 : 0, redactions, ...(session ? { session } : {}) };
}

type FinalReplyValues = EntryValues & TurnUsageValues & { sessionKey: string };

/** The statement, compiled once per shape (plain or sealed search columns; touching freshness or not): every final reply runs it. */
const appendAndCount = compiledOnce('final reply with usage', (db, v: FinalReplyValues) =>
  db
    .with('appended', (qb) =>
      qb
        .insertInto('transcript_entries')
        .values(entryInsertRow(v))
        .onConflict((oc) => oc.columns(['agent_id', 'session_id', 'id']).doNothing())
        .returning('id'),
    )
    .updateTable('sessions')
    .set((eb) => turnUsageSet(eb, v))
    .where('agent_id', '=', v.agent_id)
    .where('session_key', '=', v.sessionKey)
    .where((eb) => eb.exists(eb.selectFrom('appended').select('appended.id')))
    .returningAll(),
);
