/**
 * The session's tool calls waiting for a person, and the decisions this run took: the first decision
 * (or the deadline) settles a call, and a later decision gets that first outcome back. Plain state
 * with no I/O; the workflow waits on it with `condition`, holding no activity while it waits.
 */
import { APPROVAL_TIMED_OUT, type ApprovalDecision, type ApprovalOutcome, type PendingApproval } from '../src/protocol';

export class ApprovalBook {
  private readonly waiting = new Map<string, PendingApproval>();
  private readonly decided = new Map<string, ApprovalOutcome>();
  private suspend: () => boolean = () => false;

  /** `when` says the run is about to continue as new: a waiting turn then stops and is handed on. */
  suspendWhen(when: () => boolean): void {
    this.suspend = when;
  }

  /** The run wants to continue as new (a waiting turn stops at its wait). */
  suspending(): boolean {
    return this.suspend();
  }

  /** A call starts waiting (again, after a continue-as-new). */
  open(pending: PendingApproval): void {
    if (!this.decided.has(pending.approvalId)) this.waiting.set(pending.approvalId, pending);
  }

  /** The outcome once the call is decided. */
  outcome(approvalId: string): ApprovalOutcome | undefined {
    return this.decided.get(approvalId);
  }

  /**
   * A person's decision: the first one settles the call, a repeat returns it. Undefined for a call
   * this run neither waits for nor decided.
   */
  decide(decision: ApprovalDecision, now: string): ApprovalOutcome | undefined {
    const first = this.decided.get(decision.approvalId);
    if (first) return first;
    if (!this.waiting.has(decision.approvalId)) return undefined;
    const outcome: ApprovalOutcome = {
      approvalId: decision.approvalId,
      status: decision.decision === 'approve' ? 'approved' : 'denied',
      ...(decision.by ? { decidedBy: decision.by } : {}),
      ...(decision.decision === 'approve' && decision.note ? { note: decision.note } : {}),
      ...(decision.decision === 'deny' && decision.reason ? { reason: decision.reason } : {}),
      decidedAt: now,
    };
    return this.settle(outcome);
  }

  /** The deadline passed with no decision: the call is denied as timed out (unless decided meanwhile). */
  timedOut(approvalId: string, now: string): ApprovalOutcome {
    return this.denyUndecided(approvalId, APPROVAL_TIMED_OUT, now);
  }

  /** The turn waiting for the call was cancelled: the call is denied so (unless decided meanwhile). */
  cancelled(approvalId: string, now: string): ApprovalOutcome {
    return this.denyUndecided(approvalId, 'the turn was cancelled', now);
  }

  /** The calls waiting now (status; carried across continue-as-new). */
  pending(): PendingApproval[] {
    return [...this.waiting.values()];
  }

  /** A call nobody decided is denied for `reason`; a decided one keeps its first outcome. */
  private denyUndecided(approvalId: string, reason: string, now: string): ApprovalOutcome {
    return this.decided.get(approvalId) ?? this.settle({ approvalId, status: 'denied', reason, decidedAt: now });
  }

  private settle(outcome: ApprovalOutcome): ApprovalOutcome {
    this.waiting.delete(outcome.approvalId);
    this.decided.set(outcome.approvalId, outcome);
    return outcome;
  }
}

/** A decision's shape, checked before the workflow accepts it (an Update validator throws this message). */
export function checkApprovalDecision(d: ApprovalDecision): void {
  if (!d || typeof d.approvalId !== 'string' || d.approvalId === '')
    throw new Error('approvalId: name the approval to decide (keel approvals lists them)');
  if (d.decision !== 'approve' && d.decision !== 'deny') throw new Error('decision: use "approve" or "deny"');
  for (const field of ['by', 'note', 'reason'] as const) {
    const value = d[field];
    if (value !== undefined && typeof value !== 'string') throw new Error(`${field}: use text`);
  }
}
