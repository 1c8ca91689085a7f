import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { insertImportedSession } from '../store/sessions-repo';
import { checkIndexKey, sessionRow, type IndexEntryReport } from './import-sessions-index';

/**
 * Gives an imported transcript its session when no `sessions.json` named it but its header carries
 * the key (`keel export` writes `sessionKey` into the header of a key's current transcript), so
 * export → import → `keel sessions` is a round trip. Like an index entry: a key of another agent is
 * skipped with its reason, and an existing session of the key is never overwritten (`exists`).
 * Times and the compaction count come from the stored entries.
 */
export async function sessionFromHeader(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  sessionId: string,
  now: Date,
): Promise<IndexEntryReport> {
  const keyProblem = checkIndexKey(sessionKey, agentId);
  if (keyProblem) return { sessionKey, sessionId, status: 'skipped', reason: keyProblem };
  const stats = await db
    .selectFrom('transcript_entries')
    .select((eb) => [
      eb.fn.min('created_at').as('first'),
      eb.fn.max('created_at').as('last'),
      eb.fn.countAll<string>().filterWhere('type', '=', 'compaction').as('compactions'),
    ])
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  const at = (v: unknown) => (v === null || v === undefined ? undefined : new Date(v as string | Date));
  const created = await insertImportedSession(
    db,
    sessionRow(
      agentId,
      sessionKey,
      {
        sessionId,
        sessionStartedAt: at(stats?.first),
        updatedAt: at(stats?.last),
        lastInteractionAt: at(stats?.last),
        memoryFlushAt: undefined,
        compactionCount: Number(stats?.compactions ?? 0),
      },
      now,
    ),
  );
  return { sessionKey, sessionId, status: created ? 'created' : 'exists' };
}
