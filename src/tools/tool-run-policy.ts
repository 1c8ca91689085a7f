/**
 * How one tool call runs: how long each run may take and which failures run it again. Resolved per
 * call from the tool's definition and its agent's config; pure.
 */
import { DEFAULTS } from '../config/defaults';
import type { KeelConfig } from '../config/keel-config';
import type { ToolDefinition, ToolRetryPolicy } from './registry';

/** The limits one tool call runs under. */
export interface ToolRunPolicy {
  readonly timeoutMs: number;
  readonly retry: Required<ToolRetryPolicy>;
  /** True when the tool has a retry policy of its own: every error it throws is retried. */
  readonly retryEveryError: boolean;
}

/**
 * The tool's limits: the agent's `toolTimeouts.<name>`, else the tool's own `timeoutMs`, else the
 * agent's `toolTimeoutMs`; the tool's retry policy over the default one.
 */
export function toolRunPolicy(
  tool: Pick<ToolDefinition, 'name' | 'timeoutMs' | 'retry'>,
  config: Pick<KeelConfig, 'toolTimeoutMs' | 'toolTimeouts'>,
): ToolRunPolicy {
  return {
    timeoutMs: config.toolTimeouts?.[tool.name] ?? tool.timeoutMs ?? config.toolTimeoutMs,
    retry: { ...DEFAULTS.toolRetry, ...tool.retry },
    retryEveryError: tool.retry !== undefined,
  };
}

/**
 * Whether a failed run is run again. A `RetryableToolError` is recognised by its name, so a tools
 * module with its own copy of Keel's package is understood too.
 */
export function runsAgain(policy: ToolRunPolicy, error: unknown, attemptsMade: number): boolean {
  if (attemptsMade >= policy.retry.maxAttempts) return false;
  return policy.retryEveryError || (error instanceof Error && error.name === 'RetryableToolError');
}

/** The wait before run `attemptsMade + 1`: the initial interval, doubling, up to the maximum. */
export function retryDelayMs(policy: ToolRunPolicy, attemptsMade: number): number {
  const { initialIntervalMs, maxIntervalMs } = policy.retry;
  return Math.min(maxIntervalMs, initialIntervalMs * 2 ** (attemptsMade - 1));
}
