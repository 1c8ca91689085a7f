import { ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { FailureTypes } from '../src/protocol';

/**
 * A failure in words a person can act on: the outer message and the innermost cause ("Activity task
 * failed: Overloaded"), and for a retry budget that ran out, which provider error persisted.
 */
export function describeFailure(err: Error): string {
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
  let type: string | undefined;
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof ApplicationFailure && e.type) type = e.type;
    if (e instanceof TimeoutFailure) return FailureTypes.ModelUnavailable;
  }
  return type ?? fallback;
}
