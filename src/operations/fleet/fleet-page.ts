/**
 * One page of the fleet for the console: `keel sessions`' rows (the same function, with a limit)
 * plus each session's failed or degraded compactions, and how many sessions match the filter. The
 * server pages so the browser never holds the whole fleet.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import type { KeelSettings } from '../../config/agent-config';
import { listSessions, whereSessions, type SessionsListOptions } from '../sessions/list-sessions';
import type { FleetPage } from './fleet-views';

/** Page `page` (from 1) of the sessions `filter` matches, in its order. */
export async function fleetPage(
  db: Kysely<Database>,
  settings: KeelSettings,
  filter: SessionsListOptions,
  page: number,
  pageSize: number,
): Promise<FleetPage> {
  const counted = await whereSessions(db.selectFrom('sessions as s'), filter)
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirst();
  const sessions = await listSessions(db, settings, {
    ...filter,
    limit: pageSize,
    offset: (page - 1) * pageSize,
  });
  const failed = new Map<string, number>();
  if (sessions.length > 0) {
    const rows = await db
      .selectFrom('compactions')
      .select(['agent_id', 'session_id', sql<number>`count(*)::int`.as('n')])
      .where(
        'session_id',
        'in',
        sessions.map((s) => s.sessionId),
      )
      .where((eb) => eb.or([eb('status', '=', 'failed'), eb('degraded', '=', true)]))
      .groupBy(['agent_id', 'session_id'])
      .execute();
    for (const r of rows) failed.set(`${r.agent_id}\u0000${r.session_id}`, Number(r.n));
  }
  return {
    sessions: sessions.map((s) => ({
      ...s,
      failedCompactions: failed.get(`${s.agentId}\u0000${s.sessionId}`) ?? 0,
    })),
    total: Number(counted?.n ?? 0),
    page,
    pageSize,
  };
}
