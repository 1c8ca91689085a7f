/** The views of the approval operations: the pending tool calls and a decision's outcome. */
import { z } from 'zod';
import 'zod-openapi';

/** One pending tool call (arguments redacted). */
export const approvalListing = z
  .strictObject({
    id: z.string(),
    agentId: z.string(),
    sessionKey: z.string(),
    toolName: z.string(),
    toolCallId: z.string(),
    arguments: z.record(z.string(), z.unknown()).meta({ description: 'The call’s arguments, redacted' }),
    approvers: z.array(z.string()).nullable(),
    deadline: z.iso.datetime(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'PendingApproval' });

/** `GET /v1/approvals`: `keel approvals --json`. */
export const approvalsList = z.strictObject({ approvals: z.array(approvalListing) }).meta({ id: 'ApprovalsList' });

/** `POST /v1/approvals/{id}`: the call's outcome, the first decision's when it was decided before. */
export const approvalOutcome = z
  .strictObject({
    approvalId: z.string(),
    status: z.enum(['approved', 'denied']),
    decidedBy: z.string().optional(),
    note: z.string().optional(),
    reason: z.string().optional(),
    decidedAt: z.iso.datetime(),
  })
  .meta({ id: 'ApprovalOutcome' });
