import { DEFAULTS } from '../config/defaults';

/**
 * The most characters a summary may have: OpenClaw's 16,000-character cap, and never more than
 * `maxSummaryWindowShare` (10%) of the window, so stacked compactions cannot crowd out the conversation.
 */
export function summaryCharBudget(contextWindowTokens: number): number {
  const windowShare = Math.floor(contextWindowTokens * DEFAULTS.maxSummaryWindowShare * DEFAULTS.charsPerToken);
  return Math.max(1_000, Math.min(DEFAULTS.maxSummaryChars, windowShare));
}

/**
 * Tokens a summarizer call sets aside for its prompt's scaffolding beyond what it counts: OpenClaw's
 * 4,096, at most a tenth of the window, so a small window still has room for conversation text.
 *
 * @example summarizationOverheadTokens(200_000) // 4_096
 * @example summarizationOverheadTokens(4_000)   // 400
 */
export function summarizationOverheadTokens(contextWindowTokens: number): number {
  return Math.min(DEFAULTS.summarizationOverheadTokens, Math.floor(contextWindowTokens * DEFAULTS.maxSummarizationOverheadWindowShare));
}
