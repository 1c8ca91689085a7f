/**
 * The steps of a tool call that waits for a person, in workflow code: the pending row is recorded,
 * the workflow waits on its `ApprovalBook` (a timer and a condition, nothing else held), and the
 * outcome is stored, with the error result of a denied call. Used by `SessionSteps` only for calls
 * the model-call activity marked; a turn without one never gets here.
 */
import * as wf from '@temporalio/workflow';
import type { createApprovalActivities } from '../activities/approval-activities';
import type { RunToolResult } from '../activities/tool-activities';
import type { ApprovalOutcome, PendingApproval, ToolCallApproval } from '../src/protocol';
import type { ApprovalBook } from './approval-book';
import type { TurnProgress } from './turn-progress';
import { TurnSuspended } from './turn-suspended';

/** Where a tool call is, for its approval's steps. */
export interface ToolCallRef {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly assistantEntryId: string;
  readonly toolCallId: string;
}

/** The approval steps over the session's book and its local activities. */
export class ApprovalSteps {
  constructor(
    private readonly book: ApprovalBook,
    private readonly steps: Pick<ReturnType<typeof createApprovalActivities>, 'openApproval' | 'settleApproval'>,
  ) {}

  /** A tool call starts waiting for a person: its pending row is recorded (arguments redacted), with its deadline. */
  async open(ref: ToolCallRef, toolName: string, approval: ToolCallApproval): Promise<PendingApproval> {
    const approvalId = wf.uuid4();
    const deadline = new Date(Date.now() + approval.timeoutMs).toISOString();
    const approvers = approval.approvers ? { approvers: approval.approvers } : {};
    await this.steps.openApproval({ ...ref, approvalId, toolName, deadline, now: now(), ...approvers });
    return { approvalId, toolName, toolCallId: ref.toolCallId, deadline };
  }

  /**
   * The wait: a timer and a condition (no activity, worker slot or connection is held) until the
   * first decision or the deadline, then the decision is stored. Returns the error result of a denied
   * call; undefined when the call was approved and runs, with the idempotency key it always had. A
   * run about to continue as new stops the turn here (`TurnSuspended`); a cancelled turn denies the call.
   */
  async wait(ref: ToolCallRef, turn: TurnProgress, pending: PendingApproval): Promise<RunToolResult | undefined> {
    const { approvalId } = pending;
    this.book.open(pending);
    // At least a millisecond: a deadline already passed times out at once.
    const left = Math.max(1, Date.parse(pending.deadline) - Date.now());
    let outcome;
    try {
      const decided = () => this.book.outcome(approvalId) !== undefined;
      await wf.condition(() => decided() || this.book.suspending(), left);
      if (!decided() && this.book.suspending() && Date.now() < Date.parse(pending.deadline))
        throw new TurnSuspended(pending);
      outcome = this.book.outcome(approvalId) ?? this.book.timedOut(approvalId, now());
    } catch (err) {
      if (!wf.isCancellation(err)) throw err;
      // The row must not stay pending for a turn that no longer waits.
      const cancelled = this.book.cancelled(approvalId, now());
      await wf.CancellationScope.nonCancellable(() => this.settle(ref, turn, pending.toolName, cancelled));
      throw err;
    }
    return this.settle(ref, turn, pending.toolName, outcome);
  }

  /** Stores an approval's outcome; the turn's next entry follows the decision's entry. */
  private async settle(
    ref: ToolCallRef,
    turn: TurnProgress,
    toolName: string,
    outcome: ApprovalOutcome,
  ): Promise<RunToolResult | undefined> {
    const settled = await this.steps.settleApproval({
      ...ref,
      toolName,
      outcome,
      decisionEntryId: wf.uuid4(),
      resultEntryId: wf.uuid4(),
      parentId: turn.parentId,
      now: now(),
    });
    turn.parentId = settled.decisionEntryId;
    return settled.denied;
  }
}

function now(): string {
  return new Date().toISOString();
}
