/**
 * The wake-up of a session's event streams: a PostgreSQL NOTIFY channel per session, told when the
 * session has written something unasked (a subagent's report, its answer). It carries nothing:
 * the streams read what was written from the transcript, so a lost notice only delays them until
 * their next poll.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema';

/** The channel of a session's events: hashed, so any session key makes a valid identifier. */
export function sessionEventsChannel(ids: { readonly agentId: string; readonly sessionKey: string }): string {
  const digest = createHash('sha256').update(`${ids.agentId}\u0000${ids.sessionKey}`).digest('hex');
  return `keel_events_${digest.slice(0, 40)}`;
}

/** Wakes the session's event streams. Best effort: a failed NOTIFY is only reported (the streams poll too). */
export async function publishSessionEvent(
  db: Kysely<Database>,
  ids: { readonly agentId: string; readonly sessionKey: string },
  warn: (message: string, fields: Record<string, unknown>) => void,
): Promise<void> {
  try {
    await sql`select pg_notify(${sessionEventsChannel(ids)}, '')`.execute(db);
  } catch (err) {
    warn('session event notice failed; event streams hear it at their next poll', {
      sessionKey: ids.sessionKey,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}
