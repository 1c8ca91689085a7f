/** Steering and killing a subagent: the same steps for the parent's tools and the operator's CLI. */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import type { SessionSignals } from '../runtime/deps';
import {
  ENDED_STATUSES,
  liveChildren,
  markKilled,
  markSteered,
  type SubagentRun,
  type SubagentStatus,
} from '../store/subagent-runs-repo';
import { sessionWorkflowId } from '../sessions/session-key';

/** True once a run's status is final (done, failed, killed). */
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
  // Its parent records the workflow once the child runs: until then a steer could start the child
  // without its task (or find nothing), and the run has not ended either.
  if (!run.workflow_id)
    return { sent: false, message: `subagent ${run.id} has not started yet; send the message again in a moment` };
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

/**
 * Cancels a subagent's workflow and its in-flight activities; the child announces `killed` to its
 * parent. The workflow's id follows from the child's session key, so a run is killed from the
 * moment it exists: one whose workflow is not running yet is marked killed first, and a child that
 * starts after that reads the mark and cancels itself before its task's first model call. The
 * child's own children that have not ended are killed with it, and theirs, to the last generation:
 * their workflows outlive a parent's close (ABANDON), so nothing else would stop them.
 */
export async function killSubagent(
  db: Kysely<Database>,
  sessions: SessionSignals,
  run: SubagentRun,
): Promise<{ killed: boolean; message: string }> {
  const outcome = await killRun(db, sessions, run);
  if (outcome === 'ended')
    return { killed: false, message: `subagent ${run.id} already ended (${run.status}); nothing to kill` };
  const descendants = await killChildrenOf(db, sessions, run);
  const also = descendants > 0 ? `; ${descendants} of its own subagents killed with it` : '';
  if (outcome === 'closed')
    return {
      killed: true,
      message: `subagent ${run.id} had no running workflow (its session closed); marked killed${also}`,
    };
  return {
    killed: true,
    message: `kill requested for subagent ${run.id}; ${run.parent_session_key} hears it as the subagent's outcome${also}`,
  };
}

/**
 * One run's kill: `cancelled` (its workflow ran or may start), `closed` (its session had closed:
 * marked killed), or `ended` before this kill. Marked killed in every case, not only at its
 * announce: its children's kill announces must find it ended (see `announceToParent`).
 */
async function killRun(
  db: Kysely<Database>,
  sessions: SessionSignals,
  run: SubagentRun,
): Promise<'cancelled' | 'closed' | 'ended'> {
  if (hasEnded(run)) return 'ended';
  const workflowId = run.workflow_id ?? sessionWorkflowId(run.child_agent_id ?? run.agent_id, run.child_session_key);
  if (await sessions.cancel(workflowId)) {
    await markKilled(db, run, new Date().toISOString());
    return 'cancelled';
  }
  if (!(await markKilled(db, run, new Date().toISOString()))) return 'ended';
  // A child that started between the first cancel and the mark is cancelled now; a later one reads the mark.
  await sessions.cancel(workflowId);
  return run.workflow_id ? 'closed' : 'cancelled';
}

/** Kills the runs that `run`'s child spawned and that have not ended, and theirs; returns how many. */
async function killChildrenOf(db: Kysely<Database>, sessions: SessionSignals, run: SubagentRun): Promise<number> {
  let killed = 0;
  for (const child of await liveChildren(db, run.child_agent_id ?? run.agent_id, run.child_session_key)) {
    if ((await killRun(db, sessions, child)) !== 'ended') killed++;
    killed += await killChildrenOf(db, sessions, child);
  }
  return killed;
}
