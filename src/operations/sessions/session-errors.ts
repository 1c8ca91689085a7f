import { WorkflowNotFoundError } from '@temporalio/client';
import { TemporalFailure } from '@temporalio/common';
import { FailureTypes } from '../../protocol';
import { UnknownSessionError } from '../errors';
import { shownKey } from '../shown-key';
import { parseSessionKey } from '../../sessions/session-key';

/**
 * Runs a command's request to a session workflow, turning "no such session" answers into an
 * UnknownSessionError that says so: a query to a workflow that never ran, or a failure of type
 * `KeelUnknownSession` anywhere in the cause chain (the worker found no session row).
 */
export async function forKnownSession<T>(sessionKey: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw neverRan(sessionKey);
    const unknown = failureOfType(err, FailureTypes.UnknownSession);
    if (unknown) throw new UnknownSessionError(sessionKey, `${unknown.message}; nothing was created`);
    throw err;
  }
}

function failureOfType(err: unknown, type: string): Error | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof TemporalFailure && (e as TemporalFailure & { type?: string }).type === type) return e;
  }
  return undefined;
}

/** The error for a session that no message ever reached: it names the key, its agent and how to find keys. */
export function neverRan(sessionKey: string): UnknownSessionError {
  const agentId = parseSessionKey(sessionKey).agentId ?? 'main';
  return new UnknownSessionError(
    sessionKey,
    `no session ${shownKey(sessionKey)} for agent ${agentId}: no message has been sent to it (check the key with \`keel sessions\`; nothing was created)`,
  );
}
