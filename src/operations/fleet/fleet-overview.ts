/**
 * The fleet view's two charts, aggregated in the database so the browser gets a few numbers, not
 * the fleet: how full the sessions' windows are (a histogram by tenths of the window), and the
 * compactions of the last day per hour with the failed or degraded ones apart.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import { agentConfig, type KeelSettings } from '../../config/agent-config';
import { configuredWindow } from '../../config/configured-window';
import { windowInForceOf } from '../../context/learned-window';
import type { FleetOverview } from './fleet-views';

/** Context tokens are grouped in bins this wide before the windows are applied (one row per agent, model and bin). */
const TOKEN_BIN = 1_000;
/** Hours the compactions chart covers. */
const COMPACTION_HOURS = 24;

/** The charts over the sessions of `agentIds` (all when unset). A session's window is its agent's, with the learned limit (not its own estimate scale). */
export async function fleetOverview(
  db: Kysely<Database>,
  settings: KeelSettings,
  agentIds: readonly string[] | undefined,
  now: Date = new Date(),
): Promise<FleetOverview> {
  let bins = db
    .selectFrom('sessions')
    .select([
      'agent_id',
      'model_override',
      sql<number>`(context_tokens / ${sql.lit(TOKEN_BIN)})::int`.as('bin'),
      sql<number>`count(*)::int`.as('n'),
    ])
    .groupBy(['agent_id', 'model_override', sql`(context_tokens / ${sql.lit(TOKEN_BIN)})::int`]);
  if (agentIds) bins = bins.where('agent_id', 'in', agentIds.length > 0 ? [...agentIds] : ['']);
  const learned = new Map(
    (await db.selectFrom('model_limits').select(['model', 'context_window']).execute()).map((l) => [
      l.model,
      l.context_window,
    ]),
  );
  const pressure = Array.from({ length: 10 }, () => 0);
  for (const row of await bins.execute()) {
    const agent = agentConfig(settings, row.agent_id);
    const model = row.model_override ?? agent.model;
    const window = windowInForceOf(configuredWindow(agent, model).tokens, learned.get(model), undefined);
    const share = window > 0 ? (Number(row.bin) * TOKEN_BIN) / window : 0;
    pressure[Math.min(9, Math.floor(share * 10))]! += Number(row.n);
  }

  const since = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000 - (COMPACTION_HOURS - 1) * 3_600_000);
  let hours = db
    .selectFrom('compactions')
    .select([
      sql<Date>`date_trunc('hour', started_at)`.as('hour'),
      sql<number>`count(*)::int`.as('total'),
      sql<number>`count(*) filter (where status = 'failed' or degraded)::int`.as('failed'),
    ])
    .where('started_at', '>=', since)
    .groupBy(sql`date_trunc('hour', started_at)`);
  if (agentIds) hours = hours.where('agent_id', 'in', agentIds.length > 0 ? [...agentIds] : ['']);
  const counted = new Map((await hours.execute()).map((h) => [new Date(h.hour).getTime(), h]));
  const compactionsPerHour = Array.from({ length: COMPACTION_HOURS }, (_, i) => {
    const at = since.getTime() + i * 3_600_000;
    const h = counted.get(at);
    return { hour: new Date(at).toISOString(), total: Number(h?.total ?? 0), failed: Number(h?.failed ?? 0) };
  });
  return { pressure, compactionsPerHour };
}
