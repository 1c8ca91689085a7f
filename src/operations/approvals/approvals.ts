/**
 * The approval operations: tool calls waiting for a person, listed from the database across sessions
 * (`keel approvals`, `GET /v1/approvals`), and decided through the session that waits (`keel approve`
 * / `keel deny`, `POST /v1/approvals/{id}`).
 */
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { ApplicationFailure } from '@temporalio/client';
import type { Database } from '../../store/schema';
import type { KeelClient } from '../../client/keel-client';
import { FailureTypes, type ApprovalOutcome } from '../../protocol';
import { getToolApproval, listPendingApprovals, outcomeOfRow, type ToolApprovalRow } from '../../store/approvals-repo';
import { UnknownApprovalError } from '../errors';
import { shownId } from '../shown-key';
import type { approvalListing } from './approval-views';

/** One pending tool call, as the CLI and the API list it (arguments redacted). */
export type ApprovalListing = z.infer<typeof approvalListing>;

/** Pending tool calls across sessions (only `agentId`'s when given), oldest first. */
export async function listApprovals(
  deps: { readonly db: Kysely<Database> },
  input: { readonly agentId?: string | undefined } = {},
): Promise<{ approvals: ApprovalListing[] }> {
  return { approvals: (await listPendingApprovals(deps.db, input.agentId)).map(listing) };
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
  deps: { readonly db: Kysely<Database>; readonly client: KeelClient },
  input: DecisionInput,
): Promise<ApprovalOutcome> {
  const { db, client } = deps;
  const row = await getToolApproval(db, input.id);
  if (!row)
    throw new UnknownApprovalError(`no tool approval ${shownId(input.id)}; \`keel approvals\` lists the pending ones`);
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
