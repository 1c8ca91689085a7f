/**
 * What a finished turn calls for (memory flush, compaction), decided from the session row its usage
 * was just added to, and the counters the session workflow keeps for status.
 */
import type { SessionRow } from '../../src/store/schema';
import { decideAfterTurn, type AfterTurnDecision } from '../../src/turn/turn-decisions';
import { configuredWindow } from '../../src/config/configured-window';
import type { PromptCacheCounters } from '../../src/protocol';
import { compactionHoldInput } from './compaction-hold';
import type { TurnContext } from './turn-context';

/** The counters after the turn and what maintenance they call for. */
export interface FinishTurnResult extends AfterTurnDecision {
  readonly contextTokens: number;
  /** The window in force: configured, or lower when a provider limit was learned. */
  readonly contextWindow: number;
  /** The configured window (status shows both when they differ). */
  readonly configuredContextWindow: number;
  readonly compactionCount: number;
  /** The session's prompt tokens since it started, by how the provider's cache served them. */
  readonly promptCache: PromptCacheCounters;
  /** The model the session's turns call (its override, else the agent's). */
  readonly model: string;
}

/**
 * The decisions after a turn, from `session` (the row after the turn's usage was added), the
 * context the next turn starts from and the window the turn was budgeted against.
 */
export function decideAfterFinish(
  turn: Pick<TurnContext, 'agentId' | 'deps' | 'metrics' | 'model'>,
  session: SessionRow | undefined,
  contextTokens: number,
  contextWindow: number,
): FinishTurnResult {
  const { deps, model } = turn;
  turn.metrics?.pressure(turn.agentId, contextTokens / contextWindow);
  const decision = decideAfterTurn({
    ...compactionHoldInput(session, deps.config, contextWindow),
    contextTokens,
    reserveTokens: deps.config.reserveTokens,
    reserveTokensFloor: deps.config.reserveTokensFloor,
    softThresholdTokens: deps.config.softThresholdTokens,
    backgroundCompactionShare: deps.config.backgroundCompactionShare,
    compactionCount: session?.compaction_count ?? 0,
    memoryFlushCompactionCount: session?.memory_flush_compaction_count ?? null,
    compactionFailures: session?.compaction_failures ?? 0,
  });
  return {
    ...decision,
    // Turned off (memoryFlush.enabled): the turn asks for no flush at the soft threshold.
    memoryFlush: decision.memoryFlush && deps.config.memoryFlushEnabled,
    contextTokens,
    contextWindow,
    configuredContextWindow: configuredWindow(deps.config, model).tokens,
    compactionCount: session?.compaction_count ?? 0,
    promptCache: {
      inputTokens: Number(session?.input_tokens ?? 0),
      cacheReadTokens: Number(session?.cache_read_tokens ?? 0),
      cacheWriteTokens: Number(session?.cache_write_tokens ?? 0),
      ...(session?.usage_estimated ? { estimated: true as const } : {}),
    },
    model,
  };
}
