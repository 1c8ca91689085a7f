/**
 * The two database steps of a tool call that waits for a person, run by the session workflow only on
 * that path: open (the pending row, arguments redacted) and settle (the row's one decision, an entry
 * the transcript keeps, the metric, and for a denial the error result the model reads). Each is
 * idempotent, so a retry or a replay after a worker crash writes nothing twice.
 */
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import { redactSecrets } from '../src/security/redact';
import { toolCallArguments, type CustomEntry } from '../src/context/types';
import { appendEntriesRedacted } from '../src/store/entries-repo';
import { decideToolApproval, openToolApproval } from '../src/store/approvals-repo';
import { APPROVAL_TIMED_OUT, type ApprovalOutcome } from '../src/protocol';
import { errorOutput, loadToolCall, storeToolResult, storedToolResult, type ToolCallRef } from './parts/tool-call-io';
import type { RunToolResult } from './tool-activities';

/** Opening an approval: the call, who may approve and until when. */
export interface OpenApprovalInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly approvalId: string;
  readonly assistantEntryId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly approvers?: readonly string[];
  readonly deadline: string;
  readonly now: string;
}

/** Settling an approval: its outcome, and where its entries go. */
export interface SettleApprovalInput extends ToolCallRef {
  readonly sessionKey: string;
  readonly toolName: string;
  readonly outcome: ApprovalOutcome;
  /** Deterministic id of the entry that records the decision on the transcript. */
  readonly decisionEntryId: string;
}

/** The approval steps, over the worker's deps. */
export function createApprovalActivities(allDeps: ActivityDeps) {
  /** Records the pending call with its arguments redacted; a retry writes nothing. */
  async function openApproval(input: OpenApprovalInput): Promise<void> {
    const deps = depsForAgent(allDeps, input.agentId);
    const call = await loadToolCall(deps, { ...input, resultEntryId: '', parentId: '' });
    const { value } = redactSecrets((call && toolCallArguments(call)) ?? {});
    await openToolApproval(deps.db, {
      id: input.approvalId,
      agentId: input.agentId,
      sessionKey: input.sessionKey,
      sessionId: input.sessionId,
      toolName: input.toolName,
      toolCallId: input.toolCallId,
      arguments: value,
      ...(input.approvers ? { approvers: input.approvers } : {}),
      deadline: input.deadline,
      now: input.now,
    });
  }

  /**
   * Stores the decision (row, transcript entry, metric once). A denied call is answered here with an
   * error result naming the decision, who took it and why; an approved one returns nothing and runs
   * as any call does. Returns the entry the turn's next entry follows, and the denial's result.
   */
  async function settleApproval(
    input: SettleApprovalInput,
  ): Promise<{ decisionEntryId: string; denied?: RunToolResult }> {
    const deps = depsForAgent(allDeps, input.agentId);
    const { outcome } = input;
    if (await decideToolApproval(deps.db, outcome)) {
      deps.metrics?.approval(
        input.agentId,
        outcome.status === 'approved' ? 'approved' : timedOut(outcome) ? 'timed_out' : 'denied',
      );
    }
    const entry: CustomEntry = {
      type: 'custom',
      customType: 'tool_approval',
      id: input.decisionEntryId,
      parentId: input.parentId,
      timestamp: input.now,
      data: { ...outcome, toolName: input.toolName, toolCallId: input.toolCallId },
    };
    await appendEntriesRedacted(deps.db, input.agentId, input.sessionId, [{ entry, tokenEstimate: null }]);
    if (outcome.status === 'approved') return { decisionEntryId: entry.id };
    const ref = { ...input, parentId: entry.id };
    const denied =
      (await storedToolResult(deps, ref)) ??
      (await storeToolResult(deps, ref, input.toolName, errorOutput(denialText(input.toolName, outcome))));
    return { decisionEntryId: entry.id, denied };
  }

  return { openApproval, settleApproval };
}

/** What the model reads for a denied call: the decision, the person if given, and the reason. */
function denialText(toolName: string, outcome: ApprovalOutcome): string {
  const by = outcome.decidedBy ? ` by ${outcome.decidedBy}` : '';
  const why = outcome.reason ? `: ${outcome.reason}` : '';
  return `tool "${toolName}" was not run: the call was denied${by}${why}`;
}

function timedOut(outcome: ApprovalOutcome): boolean {
  return outcome.status === 'denied' && outcome.reason === APPROVAL_TIMED_OUT && outcome.decidedBy === undefined;
}
