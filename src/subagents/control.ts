/** Steering and killing a subagent: the same steps for the parent's tools and the operator's CLI. */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import type { SessionSignals } from '../runtime/deps';
import { ENDED_STATUSES, markSteered, type SubagentRun, type SubagentStatus } from '../store/subagent-runs-repo';

export function hasEnded(run: SubagentRun): boolean {
  return ENDED_STATUSES.includes(run.status as SubagentStatus);
}

/**
 * Sends a message to a subagent's session; `requestId` makes a resend the same request. The child
 * answers it in its current run and announces that run's answers to its parent together. A run that
 * has ended refuses it (its row says so, or its workflow does, which decides a steer racing the end).
 */
export async function steerSubagent(
  db: Kysely<Database>,
  sessions: SessionSignals,
  run: SubagentRun,
  text: string,
  requestId: string,
): Promise<{ sent: boolean; message: string }> {
  const ended = (why: string) => ({
    sent: false,
    message: `subagent ${run.id} has ended (${why}); spawn a new one with sessions_spawn for more work`,
  });
  if (hasEnded(run)) return ended(run.status);
  await markSteered(db, run, new Date().toISOString());
  const target = { agentId: run.child_agent_id ?? run.agent_id, sessionKey: run.child_session_key };
  // A `session` child that closed idle starts again; a `run` child's closed workflow is its end.
  const admission = await sessions.steer(
    target,
    { requestId, turn: { text, streamReply: false } },
    { startIfClosed: run.mode === 'session' },
  );
  if (!admission.admitted) return ended(admission.reason);
  return {
    sent: true,
    message: `sent to subagent ${run.id}; its reply reaches ${run.parent_session_key} as a message`,
  };
}

/** Cancels a subagent's workflow and its in-flight activities; the child announces `killed` to its parent. */
export async function killSubagent(
  sessions: SessionSignals,
  run: SubagentRun,
): Promise<{ killed: boolean; message: string }> {
  if (hasEnded(run) || !run.workflow_id)
    return { killed: false, message: `subagent ${run.id} already ended (${run.status}); nothing to kill` };
  await sessions.cancel(run.workflow_id);
  return {
    killed: true,
    message: `kill requested for subagent ${run.id}; ${run.parent_session_key} hears it as the subagent's outcome`,
  };
}
