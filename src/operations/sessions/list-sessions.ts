/**
 * The sessions operation: every session row with its usage, newest first (`keel sessions`,
 * `GET /v1/sessions`, the console's fleet). Read from the database alone, so it works without workers.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database, SessionRow, SessionsTable } from '../../store/schema';
import { agentConfig, type KeelSettings } from '../../config/agent-config';
import { configuredWindow } from '../../config/configured-window';
import { windowInForceOf } from '../../context/learned-window';
import { estimateScaleFor } from '../../store/model-limits-repo';
import { pressureLevel } from '../../context/context-window';
import { DEFAULTS } from '../../config/defaults';
import { cacheHitRatePercent, splitOfContext } from '../../context/context-split';
import type { SessionListing } from './session-views';

/** Which sessions `listSessions` returns, in what order, and which page of them. */
export interface SessionsListOptions {
  readonly agentId?: string;
  /** Only this key (with `agentId`): `keel status` counts turns as `keel sessions` does. */
  readonly sessionKey?: string;
  /** Only sessions updated within this many minutes. */
  readonly activeMinutes?: number;
  /** Only these agents' sessions (KEEL_ALLOWED_AGENTS). */
  readonly agentIds?: readonly string[];
  /** Only keys containing this text (case-insensitive): the console's filter. */
  readonly keyContains?: string;
  /** The order: newest first (default), fullest context first, most compactions first, or by key. */
  readonly sort?: SessionsSort;
  /** One page: at most `limit` rows after skipping `offset` (the console never loads every session). */
  readonly limit?: number;
  readonly offset?: number;
  readonly now?: Date;
}

/** The orders `listSessions` knows. */
export type SessionsSort = 'updated' | 'context' | 'compactions' | 'key';

/** The database with `sessions` aliased `s`, as the session queries read it. */
type SessionsAsS = Database & { s: SessionsTable };

/** The filter of `opts` on `sessions as s`: `listSessions` lists with it, the console counts with it. */
export function whereSessions<O>(
  query: SelectQueryBuilder<SessionsAsS, 's', O>,
  opts: SessionsListOptions,
): SelectQueryBuilder<SessionsAsS, 's', O> {
  let q = query;
  if (opts.agentId) q = q.where('s.agent_id', '=', opts.agentId);
  if (opts.agentIds) q = q.where('s.agent_id', 'in', opts.agentIds.length > 0 ? [...opts.agentIds] : ['']);
  if (opts.sessionKey) q = q.where('s.session_key', '=', opts.sessionKey);
  // ILIKE's own wildcards in the text match themselves.
  if (opts.keyContains)
    q = q.where('s.session_key', 'ilike', `%${opts.keyContains.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (opts.activeMinutes !== undefined) {
    q = q.where('s.updated_at', '>=', new Date((opts.now ?? new Date()).getTime() - opts.activeMinutes * 60_000));
  }
  return q;
}

/** The sessions `opts` selects, as `keel sessions` lists them: newest first unless `opts.sort` says otherwise. */
export async function listSessions(
  db: Kysely<Database>,
  settings: KeelSettings,
  opts: SessionsListOptions = {},
): Promise<SessionListing[]> {
  let query = db
    .selectFrom('sessions as s')
    .select([
      's.agent_id',
      's.session_key',
      's.session_id',
      's.updated_at',
      's.context_tokens',
      's.compaction_count',
      's.compaction_failures',
      's.model_override',
      's.estimate_scales',
      's.input_tokens',
      's.cache_read_tokens',
      's.cache_write_tokens',
      's.usage_estimated',
      's.prompt_system_tokens',
      's.prompt_workspace_tokens',
      's.prompt_tool_tokens',
    ])
    .select((eb) =>
      eb
        .selectFrom('transcript_entries as e')
        .whereRef('e.agent_id', '=', 's.agent_id')
        .whereRef('e.session_id', '=', 's.session_id')
        .where('e.type', '=', 'message')
        .where('e.role', '=', 'user')
        .select(sql<number>`count(*)::int`.as('n'))
        .as('turns'),
    )
    .select((eb) =>
      eb
        .selectFrom('session_ids as h')
        .whereRef('h.agent_id', '=', 's.agent_id')
        .whereRef('h.session_key', '=', 's.session_key')
        .whereRef('h.session_id', '!=', 's.session_id')
        .select(sql<number>`count(*)::int`.as('n'))
        .as('earlier'),
    );
  query = whereSessions(query, opts);
  const sort = opts.sort ?? 'updated';
  if (sort === 'context') query = query.orderBy('s.context_tokens', 'desc');
  else if (sort === 'compactions') query = query.orderBy('s.compaction_count', 'desc');
  if (sort !== 'key') query = query.orderBy('s.updated_at', 'desc');
  query = query.orderBy('s.session_key');
  if (opts.limit !== undefined) query = query.limit(opts.limit).offset(opts.offset ?? 0);
  const rows = await query.execute();
  // The windows the providers taught (a few rows, one per model): each session shows the window its turns use.
  const learned = new Map(
    (await db.selectFrom('model_limits').select(['model', 'context_window']).execute()).map((l) => [
      l.model,
      l.context_window,
    ]),
  );
  return rows.map((r) => {
    const agent = agentConfig(settings, r.agent_id);
    const model = r.model_override ?? agent.model;
    const estimateScale = estimateScaleFor(r, model);
    const window = windowInForceOf(configuredWindow(agent, model).tokens, learned.get(model), estimateScale);
    return {
      sessionKey: r.session_key,
      agentId: r.agent_id,
      sessionId: r.session_id,
      updatedAt: new Date(r.updated_at).toISOString(),
      turns: Number(r.turns ?? 0),
      contextTokens: r.context_tokens,
      contextWindow: window,
      ...(estimateScale !== undefined ? { estimateScale } : {}),
      percentUsed: window > 0 ? Math.round((r.context_tokens / window) * 1000) / 10 : 0,
      pressure: pressureLevel(r.context_tokens, window),
      compactions: r.compaction_count,
      autoCompactionPaused: r.compaction_failures >= DEFAULTS.maxConsecutiveCompactionFailures,
      model,
      modelOverride: r.model_override !== null,
      earlierSessionIds: Number(r.earlier ?? 0),
      ...splitAndCacheOf(r),
    };
  });
}

/** The row's split (from the last turn's prompt overhead) and prompt-cache figures, each when the row has them. */
function splitAndCacheOf(
  r: Pick<
    SessionRow,
    | 'prompt_system_tokens'
    | 'prompt_workspace_tokens'
    | 'prompt_tool_tokens'
    | 'context_tokens'
    | 'input_tokens'
    | 'cache_read_tokens'
    | 'cache_write_tokens'
    | 'usage_estimated'
  >,
): Pick<SessionListing, 'contextSplit' | 'promptCache'> {
  const cache = {
    inputTokens: Number(r.input_tokens),
    cacheReadTokens: Number(r.cache_read_tokens),
    cacheWriteTokens: Number(r.cache_write_tokens),
    ...(r.usage_estimated ? { estimated: true as const } : {}),
  };
  const prompted = cache.inputTokens + cache.cacheReadTokens + cache.cacheWriteTokens > 0;
  return {
    ...(r.prompt_system_tokens !== null && r.prompt_workspace_tokens !== null && r.prompt_tool_tokens !== null
      ? {
          contextSplit: splitOfContext(
            {
              systemTokens: r.prompt_system_tokens,
              bootstrapTokens: r.prompt_workspace_tokens,
              toolTokens: r.prompt_tool_tokens,
            },
            Number(r.context_tokens),
          ),
        }
      : {}),
    ...(prompted ? { promptCache: { ...cache, hitRatePercent: cacheHitRatePercent(cache) } } : {}),
  };
}
