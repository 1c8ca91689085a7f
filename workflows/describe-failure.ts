import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { FailureTypes } from '../src/protocol';

/**
 * A failure in words a person can act on: the outer message and the innermost cause ("Activity task
 * failed: Overloaded"), and for a retry budget that ran out, which provider error persisted.
 */
export function describeFailure(err: Error): string {
  if (outOfTime(err)) {
    let last: Error = err;
    while (last.cause instanceof Error) last = last.cause;
    return `${err.message}: gave up after its time budget; the error that persisted: ${last.message}`;
  }
  let inner: Error = err;
  let timeout: TimeoutFailure | undefined;
  while (inner.cause instanceof Error) {
    if (inner instanceof TimeoutFailure) timeout ??= inner;
    inner = inner.cause;
  }
  if (inner instanceof TimeoutFailure) timeout ??= inner;
  if (timeout) {
    const last = inner !== timeout ? `; the last error was: ${inner.message}` : '';
    return `${err.message}: gave up after its time budget (${(timeout.timeoutType ?? 'unknown').toLowerCase().replace(/_/g, '-')} timeout)${last}`;
  }
  return inner === err ? err.message : `${err.message}: ${inner.message}`;
}

/** The failure `type` of the innermost ApplicationFailure, for callers that branch on it. */
export function failureType(err: Error, fallback: string): string {
  if (outOfTime(err)) return FailureTypes.ModelUnavailable;
  let type: string | undefined;
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof ApplicationFailure && e.type) type = e.type;
    if (e instanceof TimeoutFailure) return FailureTypes.ModelUnavailable;
  }
  return type ?? fallback;
}

/** An activity that kept failing with retryable errors until its schedule-to-close budget ran out. */
function outOfTime(err: Error): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof ActivityFailure && e.retryState === 'TIMEOUT') return true;
  }
  return false;
}

/**
 * Why a tool's activity failed for good, in words for the model: what happened and that the tool
 * may have run, never the infrastructure's own error text (an address, a connection string), which
 * the workflow's log keeps for the operator.
 */
export function toolFailureText(err: Error): string {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof TimeoutFailure) {
      const kind = (e.timeoutType ?? 'unknown').toLowerCase().replace(/_/g, '-');
      return `its worker stopped answering (${kind} timeout) on every attempt; it may have run, so check its effect before calling it again`;
    }
  }
  const rejected = failureType(err, '') === FailureTypes.DataError;
  return rejected
    ? `the database rejected its result (${innermost(err).message}); it ran, so check its effect before calling it again`
    : 'it could not be run or its result could not be stored; it may have run, so check its effect before calling it again';
}

function innermost(err: Error): Error {
  let inner = err;
  while (inner.cause instanceof Error) inner = inner.cause;
  return inner;
}
