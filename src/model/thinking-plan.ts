/**
 * How a model call asks for thinking: Anthropic's `thinking: { type: 'enabled', budget_tokens }`
 * (at least 1,024 tokens, below `max_tokens`), an OpenAI-compatible server's `reasoning_effort`.
 */
import { DEFAULTS } from '../config/defaults';
import type { ThinkingLevel } from '../turn/thinking-level';

/** The smallest `budget_tokens` Anthropic accepts. */
export const MIN_THINKING_BUDGET_TOKENS = 1_024;

/** What a model call sends for thinking: the level (OpenAI's effort) and Anthropic's token budget. */
export interface ThinkingRequest {
  readonly level: Exclude<ThinkingLevel, 'off'>;
  readonly budgetTokens: number;
}

/** A call's `max_tokens` and thinking, or why the level cannot run in this window. */
export type ThinkingPlan =
  { readonly maxTokens: number; readonly thinking?: ThinkingRequest } | { readonly problem: string };

/**
 * The call's `max_tokens` with thinking at `level`: the reply's own tokens plus the level's budget
 * (`DEFAULTS.thinkingBudgetTokens`), held to the reserve (a prompt plus `max_tokens` must fit the
 * window). A budget the reserve cuts below 1,024 is a problem naming the settings to change.
 *
 * @example thinkingPlan('low', 4_096, 20_000) // { maxTokens: 6_144, thinking: { level: 'low', budgetTokens: 2_048 } }
 */
export function thinkingPlan(level: ThinkingLevel, replyTokens: number, reserveTokens: number): ThinkingPlan {
  if (level === 'off') return { maxTokens: replyTokens };
  const budgetTokens = Math.min(DEFAULTS.thinkingBudgetTokens[level], reserveTokens - replyTokens);
  if (budgetTokens < MIN_THINKING_BUDGET_TOKENS) {
    return {
      problem:
        `thinking level "${level}" needs at least ${MIN_THINKING_BUDGET_TOKENS} tokens of thinking budget beside the reply's ` +
        `${replyTokens} (maxOutputTokens), but the window's reserve of ${reserveTokens} tokens leaves ${Math.max(0, budgetTokens)}: ` +
        'raise reserveTokens, lower maxOutputTokens, or set the thinking level to off',
    };
  }
  return { maxTokens: replyTokens + budgetTokens, thinking: { level, budgetTokens } };
}
