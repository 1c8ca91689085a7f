import { DEFAULTS } from '../config/defaults';

/**
 * The most characters a summary may have: OpenClaw's 16,000-character cap, and never more than
 * `maxSummaryWindowShare` (10%) of the window, so stacked compactions cannot crowd out the conversation.
 */
export function summaryCharBudget(contextWindowTokens: number): number {
  const windowShare = Math.floor(contextWindowTokens * DEFAULTS.maxSummaryWindowShare * DEFAULTS.charsPerToken);
  return Math.max(1_000, Math.min(DEFAULTS.maxSummaryChars, windowShare));
}
