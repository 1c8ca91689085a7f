import type { Kysely } from 'kysely';
import type { Database } from './schema';
import type { SessionCarriedState } from '../protocol';

/** The counters a session workflow saved when it last closed idle. */
export async function loadWorkflowState(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
): Promise<Partial<SessionCarriedState> | undefined> {
  const row = await db
    .selectFrom('sessions')
    .select('workflow_state')
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .executeTakeFirst();
  return (row?.workflow_state as Partial<SessionCarriedState> | null) ?? undefined;
}

/** Saves a closing session workflow's counters (no row: the session never stored anything, nothing to keep). */
export async function saveWorkflowState(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  state: SessionCarriedState,
): Promise<void> {
  const { queued: _q, pendingMaintenance: _m, outcomes: _o, ...counters } = state;
  await db
    .updateTable('sessions')
    .set({ workflow_state: JSON.stringify(counters) })
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .execute();
}
