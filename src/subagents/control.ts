/** Steering and killing a subagent: the same steps for the parent's tools and the operator's CLI. */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import type { SessionSignals } from '../runtime/deps';
import { ENDED_STATUSES, updateSubagentRun, type SubagentRun, type SubagentStatus } from '../store/subagent-runs-repo';

export function hasEnded(run: SubagentRun): boolean {
  return ENDED_STATUSES.includes(run.status as SubagentStatus);
}

/**
 * Sends a message to a subagent's session; `requestId` makes a resend the same request. The child
 * answers it and announces the answer to its parent. An ended run is refused with what to do instead.
 */
export async function steerSubagent(db: Kysely<Database>, sessions: SessionSignals, run: SubagentRun, text: string, requestId: string): Promise<{ sent: boolean; message: string }> {
  if (hasEnded(run)) return { sent: false, message: `subagent ${run.id} has ended (${run.status}); spawn a new one with sessions_spawn for more work` };
  await updateSubagentRun(db, run, { status: 'running', updated_at: new Date().toISOString() });
  await sessions.enqueue({ agentId: run.child_agent_id ?? run.agent_id, sessionKey: run.child_session_key }, { requestId, turn: { text, streamReply: false } });
  return { sent: true, message: `sent to subagent ${run.id}; its reply reaches ${run.parent_session_key} as a message` };
}

/** Cancels a subagent's workflow and its in-flight activities; the child announces `killed` to its parent. */
export async function killSubagent(sessions: SessionSignals, run: SubagentRun): Promise<{ killed: boolean; message: string }> {
  if (hasEnded(run) || !run.workflow_id) return { killed: false, message: `subagent ${run.id} already ended (${run.status}); nothing to kill` };
  await sessions.cancel(run.workflow_id);
  return { killed: true, message: `kill requested for subagent ${run.id}; ${run.parent_session_key} hears it as the subagent's outcome` };
}
