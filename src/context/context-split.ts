/**
 * The figures `keel status`, the chat and the console show of a session's context: the split of what
 * a model call sent, and the share of prompt tokens the provider's cache served. One definition each,
 * whether the numbers come from the session workflow or from the session's row.
 */
import type { ContextSplit, PromptCacheCounters } from '../protocol';

/** What a call sends besides the conversation: system prompt, workspace files and tools. */
export type PromptOverhead = Omit<ContextSplit, 'historyTokens'>;

/** Everything a model call's context holds: system prompt, workspace files, tools and the conversation. */
export function contextSplitTotal(split: ContextSplit): number {
  return split.systemTokens + split.bootstrapTokens + split.toolTokens + split.historyTokens;
}

/**
 * The split of a context of `contextTokens` whose call sent `overhead`: the conversation is the rest,
 * so the parts add up to the headline (as after a compaction, where status sets the history so).
 */
export function splitOfContext(overhead: PromptOverhead, contextTokens: number): ContextSplit {
  const overheadTokens = overhead.systemTokens + overhead.bootstrapTokens + overhead.toolTokens;
  return { ...overhead, historyTokens: Math.max(0, contextTokens - overheadTokens) };
}

/** Share of prompt tokens served from the provider's cache, in percent with one decimal. */
export function cacheHitRatePercent(c: PromptCacheCounters): number {
  const prompt = c.inputTokens + c.cacheReadTokens + c.cacheWriteTokens;
  return prompt > 0 ? Math.round((c.cacheReadTokens / prompt) * 1000) / 10 : 0;
}
