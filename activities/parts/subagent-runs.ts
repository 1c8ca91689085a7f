/** What a session's own turns need to know about subagents: a child's task, and the children a reset leaves behind. */
import type { Kysely } from 'kysely';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from '../../src/runtime/deps';
import type { Database } from '../../src/store/schema';
import { parseSessionKey } from '../../src/sessions/session-key';
import { FailureTypes } from '../../src/protocol';
import { liveChildren, runOfChildSession, updateSubagentRun } from '../../src/store/subagent-runs-repo';

/** The subagent id of a child session key (its uuid), or undefined for any other key. */
export function subagentIdOf(sessionKey: string): string | undefined {
  try {
    const parsed = parseSessionKey(sessionKey);
    return parsed.kind === 'subagent' ? parsed.subagentId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The depth a spawn from `sessionKey` would have: 1 from a main session, one more than the child's
 * own from a child session (a child whose run is not recorded counts as depth 1).
 */
export async function nextSpawnDepth(db: Kysely<Database>, agentId: string, sessionKey: string): Promise<number> {
  if (!subagentIdOf(sessionKey)) return 1;
  return ((await runOfChildSession(db, agentId, sessionKey))?.depth ?? 1) + 1;
}

/**
 * The first message of a spawned child: its stored task (with attachments). A run killed before its
 * workflow ran (`killSubagent`) is not started: `cancelOwnRun` asks Temporal to cancel the child's
 * workflow, which announces the kill, and this attempt fails (retryable) until the cancel lands.
 */
export async function subagentTaskText(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  cancelOwnRun: () => Promise<unknown>,
): Promise<string> {
  const run = subagentIdOf(sessionKey) ? await runOfChildSession(db, agentId, sessionKey) : undefined;
  if (!run)
    throw ApplicationFailure.nonRetryable(
      `no subagent run for ${sessionKey}: its spawn was not recorded`,
      FailureTypes.InvalidInput,
    );
  if (run.status === 'killed') {
    await cancelOwnRun();
    throw new Error(`subagent ${run.id} was killed before it started; its workflow is being cancelled`);
  }
  return run.task;
}

/** Asks Temporal to cancel the workflow this activity runs for (a child killed before it started). */
export async function cancelOwnWorkflow(deps: Pick<ActivityDeps, 'sessions'>): Promise<void> {
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (!deps.sessions || !workflowId)
    throw ApplicationFailure.nonRetryable(
      'this worker has no Temporal client to cancel a killed subagent (ActivityDeps.sessions)',
      FailureTypes.InvalidInput,
    );
  await deps.sessions.cancel(workflowId);
}

/**
 * Children spawned by an earlier session id of this key that have not ended: marked killed (the
 * parent session they worked for was reset) and returned as workflow ids for the session to cancel.
 */
export async function orphanedChildren(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  currentSessionId: string,
): Promise<string[]> {
  const live = (await liveChildren(db, agentId, sessionKey)).filter((r) => r.parent_session_id !== currentSessionId);
  const now = new Date().toISOString();
  for (const run of live) {
    await updateSubagentRun(db, run, {
      status: 'killed',
      result: 'killed: the parent session was reset',
      ended_at: now,
      updated_at: now,
    });
  }
  return live.flatMap((r) => (r.workflow_id ? [r.workflow_id] : []));
}
