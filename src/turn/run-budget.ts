/**
 * A turn's run budget: the agent's limits (keel.config.json `runBudget`, the environment, or the
 * defaults), each replaced by the request's where it sets one. Pure, so the workflow's admission
 * check and the turn's begin read the same rule.
 */
import type { ResolvedRunBudget, RunBudget, RunningTurn, TurnStopReason } from '../protocol';

/** The agent's limits, as its configuration resolved them. */
export interface AgentRunLimits {
  readonly maxModelCallsPerTurn: number | null;
  readonly maxTurnTokens: number | null;
}

/**
 * The budget a turn runs with: the request's limits over the agent's. A request that turns the step
 * limit off without any token limit gets the agent's token limit; when there is none either, its
 * step limit stays (no run is unbounded).
 * @example resolveRunBudget({ maxModelCallsPerTurn: 1000, maxTurnTokens: null }, { maxModelCalls: 50 }) // { maxModelCalls: 50, maxTokens: null }
 */
export function resolveRunBudget(agent: AgentRunLimits, request: RunBudget | undefined): ResolvedRunBudget {
  const maxModelCalls = request?.maxModelCalls !== undefined ? request.maxModelCalls : agent.maxModelCallsPerTurn;
  const maxTokens = request?.maxTokens !== undefined ? request.maxTokens : agent.maxTurnTokens;
  if (maxModelCalls === null && maxTokens === null) return { maxModelCalls: agent.maxModelCallsPerTurn, maxTokens };
  return { maxModelCalls, maxTokens };
}

/** What is wrong with a request's budget (the field and the fix), or undefined. */
export function runBudgetProblem(budget: RunBudget | undefined): { field: string; message: string } | undefined {
  if (budget === undefined) return undefined;
  if (typeof budget !== 'object' || budget === null)
    return { field: 'budget', message: 'budget: use { maxModelCalls?: number | null, maxTokens?: number | null }' };
  // A limit of one call leaves no room for the report's call.
  const limits = [
    ['maxModelCalls', budget.maxModelCalls, 2],
    ['maxTokens', budget.maxTokens, 1],
  ] as const;
  for (const [field, value, least] of limits) {
    if (value === undefined || value === null) continue;
    if (!Number.isInteger(value) || value < least)
      return {
        field: `budget.${field}`,
        message: `budget.${field}: use a whole number ≥ ${least}, or null for no limit (got ${JSON.stringify(value)})`,
      };
  }
  if (budget.maxModelCalls === null && budget.maxTokens === null)
    return {
      field: 'budget',
      message: 'budget: a run needs a limit; set maxTokens to turn the step limit (maxModelCalls) off',
    };
  return undefined;
}

/**
 * What the model is asked at a run's last call, when the run reached its budget: report, without
 * tools, where the task stands, so the person can continue it. Sent with that call only, never stored.
 */
export function budgetReportRequest(stop: TurnStopReason): string {
  const reached =
    stop.limit === 'modelCalls'
      ? `its step limit (${stop.modelCalls + 1} of ${stop.maxModelCalls} model calls, this one included)`
      : `its token budget (${stop.tokens} of ${stop.maxTokens} tokens)`;
  return [
    `[Keel] This run has reached ${reached}. No tool can be called now.`,
    'Report where the task stands: what is done, what is left, and the next step you would take.',
    'The person can continue the run from here with another message.',
  ].join(' ');
}

/**
 * The stop reason in words, for the chat, an announcement and logs.
 * @example describeStopReason({ kind: 'budget', limit: 'modelCalls', modelCalls: 8, maxModelCalls: 8, tokens: 9120, maxTokens: null })
 * // 'stopped at its step limit: 8 of 8 model calls (9120 tokens); send "continue" to go on, or raise the limit (runBudget, KEEL_MAX_MODEL_CALLS)'
 */
export function describeStopReason(stop: TurnStopReason): string {
  const figures =
    stop.limit === 'modelCalls'
      ? `its step limit: ${stop.modelCalls} of ${stop.maxModelCalls} model calls (${stop.tokens} tokens)`
      : `its token budget: ${stop.tokens} of ${stop.maxTokens} tokens (${stop.modelCalls} model calls)`;
  const setting = stop.limit === 'modelCalls' ? 'KEEL_MAX_MODEL_CALLS' : 'KEEL_MAX_TURN_TOKENS';
  return `stopped at ${figures}; send "continue" to go on, or raise the limit (runBudget, ${setting})`;
}

/**
 * A running turn in one line, for `keel status` and the console.
 * @example runningTurnLine({ turn: 4, modelCalls: 120, tokens: 2_400_000, budget: { maxModelCalls: 1000, maxTokens: 50_000_000 }, compactions: 6, toolCalls: 119 })
 * // 'running turn 4: 120 of 1000 model calls · 2400000 of 50000000 tokens · 119 tool calls · 6 compactions'
 */
export function runningTurnLine(t: RunningTurn): string {
  const of = (limit: number | null) => (limit === null ? '' : ` of ${limit}`);
  return `running turn ${t.turn}: ${t.modelCalls}${of(t.budget.maxModelCalls)} model calls · ${t.tokens}${of(t.budget.maxTokens)} tokens · ${t.toolCalls} tool calls · ${t.compactions} compactions`;
}
