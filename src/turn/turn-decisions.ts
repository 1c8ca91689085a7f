import { DEFAULTS } from '../config/defaults';
import { effectiveReserveTokens, shouldCompactAfterTurn, shouldRunMemoryFlush } from '../context/context-window';

/** What the session's counters say should happen after a turn. */
export interface AfterTurnDecision {
  /** Context crossed the soft threshold and this compaction cycle has not flushed yet. */
  readonly memoryFlush: boolean;
  /** Threshold compaction: `contextTokens > contextWindow − reserveTokens`, unless auto-compaction is paused. */
  readonly compact: boolean;
  /** Auto-compaction stopped after repeated failures; an operator retries it (docs/architecture.md, "Failure model"). */
  readonly autoCompactionPaused: boolean;
}

export interface AfterTurnInput {
  readonly contextTokens: number;
  readonly contextWindow: number;
  readonly reserveTokens: number;
  readonly softThresholdTokens: number;
  readonly compactionCount: number;
  readonly memoryFlushCompactionCount: number | null;
  readonly compactionFailures: number;
}

/** Decides the maintenance after a successful turn, from counters only (pure). */
export function decideAfterTurn(input: AfterTurnInput): AfterTurnDecision {
  const reserve = effectiveReserveTokens(input.contextWindow, input.reserveTokens);
  const paused = input.compactionFailures >= DEFAULTS.maxConsecutiveCompactionFailures;
  return {
    memoryFlush: shouldRunMemoryFlush({
      contextTokens: input.contextTokens,
      contextWindow: input.contextWindow,
      reserveTokens: reserve,
      softThresholdTokens: input.softThresholdTokens,
      compactionCount: input.compactionCount,
      memoryFlushCompactionCount: input.memoryFlushCompactionCount ?? undefined,
    }),
    compact: !paused && shouldCompactAfterTurn(input.contextTokens, input.contextWindow, reserve),
    autoCompactionPaused: paused,
  };
}
