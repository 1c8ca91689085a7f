import { sql, type Kysely } from 'kysely';
import type { Database, SessionRow } from './schema';
import { entryColumns, redactEntries, type EntryToAppend, type RedactedAppendResult } from './entries-repo';
import { atRestOf } from './at-rest';
import { searchValues } from './entry-search-text';
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
  const atRest = atRestOf(db);
  const { columns, entry } = entryColumns(atRest, usage.agentId, sessionId, redacted[0]!);
  const [session] = await appendAndCount(db, { ...columns, ...searchValues(atRest, entry), sessionKey: usage.sessionKey, ...turnUsageValues(usage) });
  return { inserted: session ? 1 : 0, redactions, ...(session ? { session } : {}) };
}

type FinalReplyValues = ReturnType<typeof entryColumns>['columns'] &
  ReturnType<typeof searchValues> &
  TurnUsageValues & { sessionKey: string };

/** The statement, compiled once per shape (plain or sealed search columns; touching freshness or not): every final reply runs it. */
const appendAndCount = compiledOnce('final reply with usage', (db, v: FinalReplyValues) =>
  db
    .with('appended', (qb) =>
      qb
        .insertInto('transcript_entries')
        .values({
          agent_id: v.agent_id,
          session_id: v.session_id,
          id: v.id,
          parent_id: v.parent_id,
          type: v.type,
          role: v.role,
          payload: v.payload,
          token_estimate: v.token_estimate,
          byte_size: v.byte_size,
          created_at: v.created_at,
          search_vector: 'searchText' in v ? sql<string>`to_tsvector('simple', ${v.searchText})` : null,
          search_terms: 'searchTerms' in v ? v.searchTerms : null,
        })
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
