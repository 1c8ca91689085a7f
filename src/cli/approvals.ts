/**
 * `keel approvals`, `keel approve`, `keel deny`: tool calls waiting for a person, listed from the
 * database across sessions, and decided through the session that waits. Shared with the HTTP API.
 */
import type { Kysely } from 'kysely';
import { ApplicationFailure } from '@temporalio/client';
import type { Database } from '../store/schema';
import type { KeelClient } from '../client/keel-client';
import { FailureTypes, type ApprovalOutcome } from '../protocol';
import { getToolApproval, listPendingApprovals, outcomeOfRow, type ToolApprovalRow } from '../store/approvals-repo';

/** A decision named an approval that does not exist, or that its session no longer waits for: exit code 1 (API: 404). */
export class UnknownApprovalError extends Error {
  override readonly name = 'UnknownApprovalError';
}

/** One pending tool call, as the CLI and the API list it (arguments redacted). */
export interface ApprovalListing {
  readonly id: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly toolName: string;
  readonly toolCallId: string;
  readonly arguments: Record<string, unknown>;
  readonly approvers: readonly string[] | null;
  readonly deadline: string;
  readonly createdAt: string;
}

/** Pending tool calls across sessions, oldest first; people-text on stderr unless `json`. */
export async function approvalsList(opts: {
  db: Kysely<Database>;
  agentId?: string;
  json?: boolean;
}): Promise<{ approvals: ApprovalListing[] }> {
  const approvals = (await listPendingApprovals(opts.db, opts.agentId)).map(listing);
  if (!opts.json) {
    if (approvals.length === 0) process.stderr.write('no tool calls wait for approval\n');
    for (const a of approvals) {
      const args = JSON.stringify(a.arguments);
      process.stderr.write(
        `${a.id}  ${a.toolName}  ${a.agentId} ${a.sessionKey}  until ${a.deadline}${a.approvers ? `  approvers: ${a.approvers.join(', ')}` : ''}\n    ${args.length > 100 ? `${args.slice(0, 100)}…` : args}\n`,
      );
    }
  }
  return { approvals };
}

/** A decision as the CLI and the API take it. */
export interface DecisionInput {
  readonly id: string;
  readonly decision: 'approve' | 'deny';
  readonly by?: string;
  readonly note?: string;
  readonly reason?: string;
}

/**
 * Decides a pending tool call through its session. A call decided before (by a person or its
 * deadline) returns that first outcome; an unknown id is an `UnknownApprovalError` naming `keel approvals`.
 */
export async function decideApproval(
  db: Kysely<Database>,
  client: KeelClient,
  input: DecisionInput,
): Promise<ApprovalOutcome> {
  const row = await getToolApproval(db, input.id);
  if (!row)
    throw new UnknownApprovalError(`no tool approval ${shortId(input.id)}; \`keel approvals\` lists the pending ones`);
  const first = outcomeOfRow(row);
  if (first) return first;
  const by = input.by !== undefined ? { by: input.by } : {};
  try {
    return input.decision === 'approve'
      ? await client.approve(row.session_key, row.id, { ...by, ...(input.note ? { note: input.note } : {}) })
      : await client.deny(row.session_key, row.id, { ...by, ...(input.reason ? { reason: input.reason } : {}) });
  } catch (err) {
    if (!(err instanceof ApplicationFailure && err.type === FailureTypes.UnknownApproval)) throw err;
    // Decided meanwhile (its deadline, another person): the row has the first outcome.
    const settled = outcomeOfRow((await getToolApproval(db, row.id)) ?? row);
    if (settled) return settled;
    throw new UnknownApprovalError(`session ${row.session_key} no longer waits for approval ${row.id}: ${err.message}`);
  }
}

/** The outcome in words, for stderr. */
export function describeOutcome(outcome: ApprovalOutcome): string {
  const by = outcome.decidedBy ? ` by ${outcome.decidedBy}` : '';
  const said = outcome.note ?? outcome.reason;
  return `${outcome.approvalId} ${outcome.status}${by}${said ? `: ${said}` : ''}`;
}

function listing(row: ToolApprovalRow): ApprovalListing {
  return {
    id: row.id,
    agentId: row.agent_id,
    sessionKey: row.session_key,
    toolName: row.tool_name,
    toolCallId: row.tool_call_id,
    arguments: row.arguments,
    approvers: row.approvers,
    deadline: new Date(row.deadline).toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

function shortId(id: string): string {
  return id.length > 80 ? `${id.slice(0, 80)}… (${id.length} characters)` : id;
}
