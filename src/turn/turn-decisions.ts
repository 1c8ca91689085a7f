import { DEFAULTS } from '../config/defaults';
import { effectiveReserveTokens, shouldCompactAfterTurn, shouldRunMemoryFlush } from '../context/context-window';

/** What the session's counters say should happen after a turn. */
export interface AfterTurnDecision {
  /** Context crossed the soft threshold and this compaction cycle has not flushed yet. */
  readonly memoryFlush: boolean;
  /** Threshold compaction: `contextTokens > contextWindow − reserveTokens`, unless auto-compaction is paused. */
  readonly compact: boolean;
  /**
   * Background compaction: past `backgroundCompactionShare` of the budget (window − reserve) and not
   * yet at the threshold, a compaction starts beside the session. Not while paused or held.
   */
  readonly compactBeside: boolean;
  /** Auto-compaction stopped after repeated failures; an operator retries it (docs/reference.md, "Failure model"). */
  readonly autoCompactionPaused: boolean;
  /**
   * The last compaction reclaimed too little: threshold compaction waits until the context has grown
   * to this many tokens (no storm of compactions that each free a few hundred tokens). Absent when none.
   */
  readonly compactionHeldUntilTokens?: number;
}

export interface AfterTurnInput extends CompactionHoldInput {
  readonly contextTokens: number;
  readonly contextWindow: number;
  readonly reserveTokens: number;
  /** The reserve's floor (`reserveTokensFloor`); unset → the default 20,000. */
  readonly reserveTokensFloor?: number;
  readonly softThresholdTokens: number;
  /** `backgroundCompactionShare`; 0 turns background compaction off. */
  readonly backgroundCompactionShare: number;
  readonly compactionCount: number;
  readonly memoryFlushCompactionCount: number | null;
  readonly compactionFailures: number;
}

/** What the storm hold needs: the last compaction's yield and the window it applies to. */
export interface CompactionHoldInput {
  /** Tokens before and after the session's last compaction (null before the first). */
  readonly lastCompaction?: { readonly tokensBefore: number; readonly tokensAfter: number } | null;
  /** A compaction that frees less than this share of its input is low-yield (KEEL_COMPACTION_MIN_RECLAIM). */
  readonly minReclaimShare: number;
  readonly contextWindow: number;
}

/**
 * After a low-yield compaction, the context it could not shrink would trip the threshold again on
 * the very next turn. Returns the context size up to which threshold compaction (after a turn, and
 * the pre-call check) waits: the minimum reclaim share of the window past where that compaction
 * started, and at most halfway into the reserve, so the request still fits. A provider's "prompt is
 * too long" still compacts at once (overflow is never held). Undefined when there is no hold.
 */
export function compactionHoldLimit(input: CompactionHoldInput, reserveTokens: number): number | undefined {
  const last = input.lastCompaction;
  if (!last || last.tokensBefore <= 0) return undefined;
  const reclaimed = (last.tokensBefore - last.tokensAfter) / last.tokensBefore;
  if (reclaimed >= input.minReclaimShare) return undefined;
  return Math.min(
    last.tokensBefore + Math.ceil(input.minReclaimShare * input.contextWindow),
    input.contextWindow - Math.floor(reserveTokens / 2),
  );
}

/** Decides the maintenance after a successful turn, from counters only (pure). */
export function decideAfterTurn(input: AfterTurnInput): AfterTurnDecision {
  const reserve = effectiveReserveTokens(input.contextWindow, input.reserveTokens, input.reserveTokensFloor);
  const paused = input.compactionFailures >= DEFAULTS.maxConsecutiveCompactionFailures;
  const over = shouldCompactAfterTurn(input.contextTokens, input.contextWindow, reserve);
  const limit = over ? compactionHoldLimit(input, reserve) : undefined;
  const held = limit !== undefined && input.contextTokens < limit ? limit : undefined;
  return {
    memoryFlush: shouldRunMemoryFlush({
      contextTokens: input.contextTokens,
      contextWindow: input.contextWindow,
      reserveTokens: reserve,
      softThresholdTokens: input.softThresholdTokens,
      compactionCount: input.compactionCount,
      memoryFlushCompactionCount: input.memoryFlushCompactionCount ?? undefined,
    }),
    compact: !paused && over && held === undefined,
    compactBeside: !paused && !over && shouldCompactBeside(input, reserve),
    autoCompactionPaused: paused,
    ...(held !== undefined ? { compactionHeldUntilTokens: held } : {}),
  };
}

/** Past the background share of the budget, and past any storm hold a low-yield compaction left. */
function shouldCompactBeside(input: AfterTurnInput, reserve: number): boolean {
  const share = input.backgroundCompactionShare;
  if (share <= 0 || input.contextTokens <= share * (input.contextWindow - reserve)) return false;
  const hold = compactionHoldLimit(input, reserve);
  return hold === undefined || input.contextTokens >= hold;
}
