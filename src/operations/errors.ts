/**
 * The errors an operation throws for a reason the caller can act on, every one declared here. Each
 * has a `kind` from one short union; the command line maps kinds to exit codes and the HTTP API to
 * problem details, each in one table, so a new error needs no new branch in either presenter.
 */
import { UnreachableDependencyError } from '../runtime/reach';
import { shownId } from './shown-key';

/**
 * Why an operation refused: the session key names no session; the id names no record; the record's
 * state refuses it now (another compaction runs, the window moved on); the input is wrong; a
 * dependency (Temporal, PostgreSQL) did not answer.
 */
export type OperationErrorKind = 'unknown-session' | 'not-found' | 'busy' | 'invalid' | 'unavailable';

/** An operation's refusal: its kind, the problem's name (`unknown-approval`) and the input field at fault. */
export abstract class OperationError extends Error {
  abstract readonly kind: Exclude<OperationErrorKind, 'unavailable'>;
  /** The problem's own name, the last part of the API's `type` URN. */
  abstract readonly problem: string;
  /** The input field at fault (`sessionKey`, `id`, `policy`). */
  abstract readonly field: string;
}

/** The session key names a session that does not exist; nothing was created. */
export class UnknownSessionError extends OperationError {
  override readonly name = 'UnknownSessionError';
  readonly kind = 'unknown-session';
  readonly problem = 'unknown-session';
  readonly field = 'sessionKey';
  constructor(
    readonly sessionKey: string,
    message: string,
  ) {
    super(message);
  }
}

/** The id named no `compactions` row of the agent (another agent's row is not shown or retried). */
export class CompactionNotFoundError extends OperationError {
  override readonly name = 'CompactionNotFoundError';
  readonly kind = 'not-found';
  readonly problem = 'unknown-compaction';
  readonly field = 'id';
  constructor(
    readonly id: string,
    readonly agentId: string,
  ) {
    super(
      `no compaction ${shownId(id)} for agent ${agentId}; list them with \`keel compactions --agent ${agentId}\` (another agent's compaction needs its --agent)`,
    );
  }
}

/** No subagent run of that id for the agent (another agent's runs need its --agent). */
export class SubagentNotFoundError extends OperationError {
  override readonly name = 'SubagentNotFoundError';
  readonly kind = 'not-found';
  readonly problem = 'unknown-subagent';
  readonly field = 'id';
  constructor(
    readonly id: string,
    readonly agentId: string,
  ) {
    super(`no subagent run ${shownId(id)} for agent ${agentId}; \`keel subagents --agent ${agentId}\` lists them`);
  }
}

/** A decision named an approval that does not exist, or that its session no longer waits for. */
export class UnknownApprovalError extends OperationError {
  override readonly name = 'UnknownApprovalError';
  readonly kind = 'not-found';
  readonly problem = 'unknown-approval';
  readonly field = 'id';
}

/**
 * A compaction edit the session's state refuses now: another compaction of the session runs, or the
 * compaction's window is no longer the session's. Nothing was changed.
 */
export class CompactionEditRefusedError extends OperationError {
  override readonly name = 'CompactionEditRefusedError';
  readonly kind = 'busy';
  readonly problem = 'compaction-edit-refused';
  readonly field = 'id';
}

/** An input the operation cannot take, with the field at fault and what to send instead. */
export class InvalidOperationInputError extends OperationError {
  override readonly name = 'InvalidOperationInputError';
  readonly kind = 'invalid';
  readonly problem = 'invalid-request';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The error's kind when it is an operation's refusal or an unreachable dependency; undefined for anything else. */
export function operationErrorKind(err: unknown): OperationErrorKind | undefined {
  if (err instanceof OperationError) return err.kind;
  if (err instanceof UnreachableDependencyError) return 'unavailable';
  return undefined;
}
