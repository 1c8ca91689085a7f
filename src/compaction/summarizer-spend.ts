/**
 * The summarizer spend limit (lossless-claw's per-session budget): model calls and tokens per window,
 * per session key and per agent, summed from the `compactions` rows. Past it a compaction writes the
 * extractive summary (no model spend) instead of waiting: the session must stay within its window,
 * and the operator can rerun the compaction with the model once the window has passed.
 */

/** A ceiling on summarizer calls and tokens (input, cached or not, + output) in the window; unset fields do not limit. */
export interface SpendCeiling {
  readonly calls?: number;
  readonly tokens?: number;
}

export interface SummarizerSpendLimits {
  readonly perSession: SpendCeiling;
  readonly perAgent: SpendCeiling;
  readonly windowMinutes: number;
}

/** What was spent in the window, per session key and per agent. */
export interface SpentInWindow {
  readonly session: { readonly calls: number; readonly tokens: number };
  readonly agent: { readonly calls: number; readonly tokens: number };
}

/** The limits from the config's flat fields (each settable by its environment variable). */
export function summarizerSpendLimits(config: {
  summarizerSessionCalls?: number | undefined;
  summarizerSessionTokens?: number | undefined;
  summarizerAgentCalls?: number | undefined;
  summarizerAgentTokens?: number | undefined;
  summarizerSpendWindowMinutes: number;
}): SummarizerSpendLimits {
  const ceiling = (calls?: number, tokens?: number): SpendCeiling => ({
    ...(calls !== undefined ? { calls } : {}),
    ...(tokens !== undefined ? { tokens } : {}),
  });
  return {
    perSession: ceiling(config.summarizerSessionCalls, config.summarizerSessionTokens),
    perAgent: ceiling(config.summarizerAgentCalls, config.summarizerAgentTokens),
    windowMinutes: config.summarizerSpendWindowMinutes,
  };
}

/** True when any ceiling is set (else the spend is not even summed). */
export function spendLimited(limits: SummarizerSpendLimits): boolean {
  return [limits.perSession.calls, limits.perSession.tokens, limits.perAgent.calls, limits.perAgent.tokens].some(
    (v) => v !== undefined,
  );
}

/**
 * Why the next summarizer call would pass a ceiling (the first one reached, naming its variable), or
 * undefined when it may go ahead. A ceiling is reached when the spend is at or over it.
 */
export function spendLimitReason(spent: SpentInWindow, limits: SummarizerSpendLimits): string | undefined {
  const checks: Array<[number, number | undefined, string, string]> = [
    [spent.session.calls, limits.perSession.calls, 'calls for this session', 'KEEL_SUMMARIZER_SESSION_CALLS'],
    [spent.session.tokens, limits.perSession.tokens, 'tokens for this session', 'KEEL_SUMMARIZER_SESSION_TOKENS'],
    [spent.agent.calls, limits.perAgent.calls, 'calls for this agent', 'KEEL_SUMMARIZER_AGENT_CALLS'],
    [spent.agent.tokens, limits.perAgent.tokens, 'tokens for this agent', 'KEEL_SUMMARIZER_AGENT_TOKENS'],
  ];
  for (const [used, ceiling, what, variable] of checks) {
    if (ceiling !== undefined && used >= ceiling) {
      return `summarizer spend limit reached: ${used.toLocaleString('en-US')} of ${ceiling.toLocaleString('en-US')} ${what} in ${limits.windowMinutes} min (${variable}); extractive summary instead`;
    }
  }
  return undefined;
}
