/**
 * Token usage in Keel's one shape (`TokenUsage`): a model call's, a turn's, a session's counters.
 * The provider's reply reports it in the transcript's shape (`input`, `output`, …); it is converted
 * here once, and usages are added only with `addUsage`.
 */
import type { TokenUsage } from '../protocol';

/** No tokens: the start of a sum. */
export const NO_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** The sum of two usages, field by field. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    ...(a.estimated || b.estimated ? { estimated: true as const } : {}),
  };
}

/** Every token a usage counts, whatever its kind: what a run's token budget is measured in. */
export function usageTotal(u: TokenUsage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
}

/**
 * A reply's usage as the provider reported it (the model client's and the transcript's shape; a
 * count the provider left out is 0), still marked `estimated` when it is Keel's count.
 * @example usageOfReply({ input: 10, output: 2, cacheRead: 100 }) // { inputTokens: 10, outputTokens: 2, cacheReadTokens: 100, cacheWriteTokens: 0 }
 */
export function usageOfReply(
  u: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; estimated?: true } | undefined,
): TokenUsage {
  return {
    inputTokens: u?.input ?? 0,
    outputTokens: u?.output ?? 0,
    cacheReadTokens: u?.cacheRead ?? 0,
    cacheWriteTokens: u?.cacheWrite ?? 0,
    ...(u?.estimated ? { estimated: true as const } : {}),
  };
}
