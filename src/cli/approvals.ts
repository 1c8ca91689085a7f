/** `keel approvals`, `keel approve`, `keel deny` as people read them (the operations are in src/operations/approvals). */
import type { ApprovalOutcome } from '../protocol';
import type { ApprovalListing } from '../operations/approvals/approvals';

/** The pending tool calls, two lines each, on stderr. */
export function renderApprovals(approvals: readonly ApprovalListing[]): void {
  if (approvals.length === 0) process.stderr.write('no tool calls wait for approval\n');
  for (const a of approvals) {
    const args = JSON.stringify(a.arguments);
    process.stderr.write(
      `${a.id}  ${a.toolName}  ${a.agentId} ${a.sessionKey}  until ${a.deadline}${a.approvers ? `  approvers: ${a.approvers.join(', ')}` : ''}\n    ${args.length > 100 ? `${args.slice(0, 100)}…` : args}\n`,
    );
  }
}

/** The outcome in words, for stderr. */
export function describeOutcome(outcome: ApprovalOutcome): string {
  const by = outcome.decidedBy ? ` by ${outcome.decidedBy}` : '';
  const said = outcome.note ?? outcome.reason;
  return `${outcome.approvalId} ${outcome.status}${by}${said ? `: ${said}` : ''}`;
}
