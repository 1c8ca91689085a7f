import type { Kysely, Selectable } from 'kysely';
import { atRestOf } from '../security/at-rest';
import { sealedRow } from '../security/sealed-rows';
import type { ApprovalOutcome } from '../protocol';
import type { Database, ToolApprovalsTable } from './schema';

/** A tool-approval row as stored. */
export type ToolApprovalRow = Selectable<ToolApprovalsTable>;

/** What opening an approval writes: the call, its redacted arguments, who may approve and the deadline. */
export interface NewToolApproval {
  readonly id: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly toolName: string;
  readonly toolCallId: string;
  readonly arguments: Record<string, unknown>;
  readonly approvers?: readonly string[];
  readonly deadline: string;
  readonly now: string;
}

/** Records a pending approval; a retried open writes nothing. */
export async function openToolApproval(db: Kysely<Database>, a: NewToolApproval): Promise<void> {
  await db
    .insertInto('tool_approvals')
    .values({
      id: a.id,
      agent_id: a.agentId,
      session_key: a.sessionKey,
      session_id: a.sessionId,
      tool_name: a.toolName,
      tool_call_id: a.toolCallId,
      arguments: atRestOf(db).json(a.arguments, sealedRow.approvalArguments(a.id)),
      approvers: a.approvers ? JSON.stringify(a.approvers) : null,
      deadline: a.deadline,
      status: 'pending',
      created_at: a.now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * Stores an approval's outcome once: a pending row takes it, a decided row keeps its first outcome.
 * Returns whether this call wrote it (a retry did not).
 */
export async function decideToolApproval(db: Kysely<Database>, outcome: ApprovalOutcome): Promise<boolean> {
  const result = await db
    .updateTable('tool_approvals')
    .set({
      status: outcome.status,
      decided_by: outcome.decidedBy ?? null,
      note: outcome.note ?? outcome.reason ?? null,
      decided_at: outcome.decidedAt,
    })
    .where('id', '=', outcome.approvalId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** One approval by id. */
export async function getToolApproval(db: Kysely<Database>, id: string): Promise<ToolApprovalRow | undefined> {
  return db.selectFrom('tool_approvals').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Pending approvals across sessions, oldest first; of one agent when `agentId` is given. */
export async function listPendingApprovals(db: Kysely<Database>, agentId?: string): Promise<ToolApprovalRow[]> {
  let query = db.selectFrom('tool_approvals').selectAll().where('status', '=', 'pending');
  if (agentId !== undefined) query = query.where('agent_id', '=', agentId);
  return query.orderBy('created_at').orderBy('id').execute();
}

/** A decided row's outcome as the workflow gave it; undefined while it is pending. */
export function outcomeOfRow(row: ToolApprovalRow): ApprovalOutcome | undefined {
  if (row.status !== 'approved' && row.status !== 'denied') return undefined;
  const said = row.note ?? undefined;
  return {
    approvalId: row.id,
    status: row.status,
    ...(row.decided_by ? { decidedBy: row.decided_by } : {}),
    ...(said !== undefined ? (row.status === 'approved' ? { note: said } : { reason: said }) : {}),
    decidedAt: new Date(row.decided_at ?? row.created_at).toISOString(),
  };
}
