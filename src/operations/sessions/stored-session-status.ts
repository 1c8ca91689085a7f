import type { Kysely } from 'kysely';
import type { KeelSettings } from '../../config/agent-config';
import { spawnAdvice } from '../../context/spawn-policy';
import type { SessionStatus } from '../../protocol';
import type { Database } from '../../store/schema';
import { listSessions } from './list-sessions';

/** What `keel status` says of a session whose workflow has not run yet. */
export const NOT_STARTED_NOTE =
  'read from the database: no turn has run in Keel yet (an imported session); its next message starts it with this context';

/**
 * The status of a session that has a row but whose workflow never ran (an imported session), read
 * from the database alone: the same figures `keel sessions` shows, nothing queued. Undefined when
 * the key has no row either.
 */
export async function storedSessionStatus(
  db: Kysely<Database>,
  settings: KeelSettings,
  agentId: string,
  sessionKey: string,
): Promise<(SessionStatus & { readonly workflowNote: string }) | undefined> {
  const [listing] = await listSessions(db, settings, { agentId, sessionKey });
  if (!listing) return undefined;
  return {
    agentId,
    sessionKey,
    turnsCompleted: 0,
    queuedTurns: 0,
    lastEntryId: null,
    contextTokens: listing.contextTokens,
    contextWindow: listing.contextWindow,
    percentUsed: listing.percentUsed,
    pressure: listing.pressure,
    compactionCount: listing.compactions,
    lastCompactionId: null,
    model: listing.model,
    ...(listing.contextSplit ? { contextSplit: listing.contextSplit } : {}),
    ...(listing.promptCache ? { promptCache: listing.promptCache } : {}),
    spawnAdvice: spawnAdvice(listing.percentUsed),
    workflowNote: NOT_STARTED_NOTE,
  };
}
