import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../../src/protocol';
import { agentNotAllowed } from '../../src/security/allowed-agents';

// Activities are async functions of one or more serializable arguments.
type AnyActivity = (...args: never[]) => Promise<unknown>;

/**
 * The session counters a workflow reads when it starts and saves when it closes: for an agent this
 * worker does not serve they are read as none and not saved, so the session's workflow can run, fail
 * its requests and close without writing anything.
 */
const SESSION_BOOKKEEPING: ReadonlySet<string> = new Set(['loadSessionCounters', 'saveSessionCounters']);

/**
 * With `allowedAgents`, every activity whose input names another agent (`agentId` of its first
 * argument) fails before it reads or writes anything, with a non-retryable `KeelAgentNotAllowed`
 * naming KEEL_ALLOWED_AGENTS: the request fails, the session goes on. Unset → activities unchanged.
 */
export function withAllowedAgents<T extends Record<string, AnyActivity>>(
  activities: T,
  allowed: readonly string[] | undefined,
): T {
  if (!allowed) return activities;
  const wrapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      const agentId = (args[0] as { agentId?: unknown } | undefined)?.agentId;
      const refusal = typeof agentId === 'string' ? agentNotAllowed(allowed, agentId) : undefined;
      if (refusal === undefined) return fn(...args);
      if (SESSION_BOOKKEEPING.has(name)) return undefined;
      throw ApplicationFailure.nonRetryable(refusal, FailureTypes.AgentNotAllowed);
    };
  }
  return wrapped as T;
}
