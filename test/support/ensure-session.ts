import type { Kysely } from 'kysely';
import type { Database, SessionRow } from '../../src/store/schema';
import { createSession, getSession, type EnsureSessionInput } from '../../src/store/sessions-repo';

/**
 * The session row, created on first use: how tests and benches give a session a row without a turn.
 * (A turn's begin creates its row with `createSession` and reads it with `readSessionForTurn`.)
 */
export async function ensureSession(db: Kysely<Database>, input: EnsureSessionInput): Promise<SessionRow> {
  await createSession(db, input);
  const row = await getSession(db, input.agentId, input.sessionKey);
  if (!row) throw new Error(`session ${input.agentId}/${input.sessionKey} vanished after insert`);
  return row;
}
