import type { Kysely } from 'kysely';
import type { Database } from './schema';

/** Reads and deletes of `session_ids`, the history of every session id a key has had. Scoped by agentId. */

export interface KeySessionId {
  readonly sessionId: string;
  readonly startedAt: Date;
  /** When a rotation replaced it; null for the key's current id. */
  readonly endedAt: Date | null;
  readonly current: boolean;
}

/**
 * Every session id of the key in start order, the current one last. The current id is included even
 * when the history lacks it (a row written before the history existed, or by hand).
 */
export async function sessionIdsOfKey(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
): Promise<KeySessionId[]> {
  const rows = await db
    .selectFrom('session_ids')
    .select(['session_id', 'started_at', 'ended_at'])
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .orderBy('started_at')
    .orderBy('session_id')
    .execute();
  const current = await db
    .selectFrom('sessions')
    .select(['session_id', 'session_started_at'])
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .executeTakeFirst();
  const ids: KeySessionId[] = rows
    .filter((r) => r.session_id !== current?.session_id)
    .map((r) => ({
      sessionId: r.session_id,
      startedAt: new Date(r.started_at),
      endedAt: r.ended_at === null ? null : new Date(r.ended_at),
      current: false,
    }));
  if (current)
    ids.push({
      sessionId: current.session_id,
      startedAt: new Date(current.session_started_at),
      endedAt: null,
      current: true,
    });
  return ids;
}

/**
 * Deletes one rotated transcript of a key: its entries, pending tool arguments, compaction and approval rows and its
 * history row (maintenance pruning). An id that is some key's current one is left alone (returns 0).
 * @returns the transcript entries deleted.
 */
export async function deleteRotatedTranscript(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const stillCurrent = await trx
      .selectFrom('sessions')
      .select('session_key')
      .where('agent_id', '=', agentId)
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
    if (stillCurrent) return 0;
    const entries = await trx
      .deleteFrom('transcript_entries')
      .where('agent_id', '=', agentId)
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
    await trx
      .deleteFrom('pending_tool_args')
      .where('agent_id', '=', agentId)
      .where('session_id', '=', sessionId)
      .execute();
    await trx.deleteFrom('compactions').where('agent_id', '=', agentId).where('session_id', '=', sessionId).execute();
    await trx
      .deleteFrom('tool_approvals')
      .where('agent_id', '=', agentId)
      .where('session_id', '=', sessionId)
      .execute();
    await trx.deleteFrom('session_ids').where('agent_id', '=', agentId).where('session_id', '=', sessionId).execute();
    return Number(entries.numDeletedRows);
  });
}
