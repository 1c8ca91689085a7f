import { DEFAULTS } from '../config/defaults';

/** What a summary replaces: the messages it summarizes and the summary before it. */
export interface ReplacedContent {
  /** Estimated tokens of the summarized messages (the plan's `summarizedTokens`). */
  readonly summarizedTokens: number;
  /** Characters of the previous summary (0 for the first compaction). */
  readonly previousSummaryChars: number;
}

/**
 * The most characters a summary may have. It grows with what the summary replaces: the previous
 * summary in full (stacked compactions carry it forward) plus `summaryShareOfReplaced` of the newly
 * summarized messages; it never passes `maxWindowShare` of the window (default
 * `maxSummaryWindowShare`; KEEL_SUMMARY_MAX_WINDOW_SHARE), so stacked compactions cannot crowd out
 * the conversation, nor falls below `minSummaryChars`. Without `replaced` (nothing known of it) the
 * window's share is the budget.
 *
 * @example summaryCharBudget(200_000, { summarizedTokens: 40_000, previousSummaryChars: 0 }) // 8,000
 */
export function summaryCharBudget(
  contextWindowTokens: number = DEFAULTS.contextWindowTokens,
  replaced?: ReplacedContent,
  maxWindowShare: number = DEFAULTS.maxSummaryWindowShare,
): number {
  const windowShare = Math.floor(contextWindowTokens * maxWindowShare * DEFAULTS.charsPerToken);
  const grown = replaced
    ? replaced.previousSummaryChars +
      Math.floor(replaced.summarizedTokens * DEFAULTS.summaryShareOfReplaced * DEFAULTS.charsPerToken)
    : windowShare;
  return Math.max(DEFAULTS.minSummaryChars, Math.min(windowShare, grown));
}

/**
 * Tokens a summarizer call sets aside for its prompt's scaffolding beyond what it counts: OpenClaw's
 * 4,096, at most a tenth of the window, so a small window still has room for conversation text.
 *
 * @example summarizationOverheadTokens(200_000) // 4_096
 * @example summarizationOverheadTokens(4_000)   // 400
 */
export function summarizationOverheadTokens(contextWindowTokens: number): number {
  return Math.min(
    DEFAULTS.summarizationOverheadTokens,
    Math.floor(contextWindowTokens * DEFAULTS.maxSummarizationOverheadWindowShare),
  );
}
