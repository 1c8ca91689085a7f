import type { AgentTaskResult, SessionWorkflowInput } from '../src/protocol';
import { parseSessionKey } from '../src/sessions/session-key';
import { SessionRun } from './session-run';
import { subagentWorkflow } from './subagent';
import { agentTaskWorkflow } from './agent-task';

/**
 * One long-lived workflow per (agentId, sessionKey). Its identity replaces OpenClaw's session write
 * lock. Requests arrive by the `awaitResult` Update that carries them (Update-with-Start: admitted and
 * awaited in one call), by Signal (`enqueue`, no in-flight limit: a client's sends queued behind
 * others), or as a steer (`steer`); either way in arrival order, run one at a time from a single
 * loop; senders collect outcomes with `awaitResult`. Maintenance a turn calls for (memory flush,
 * threshold compaction) runs after its reply, before the next request.
 *
 * The loop ends by continue-as-new (Temporal suggests it, or every `maxTurnsPerRun` turns), carrying
 * queued requests and uncollected outcomes, or by closing after a quiet period (counters saved; the
 * next message starts a fresh run that reads them back).
 *
 * Subagents (`subagentWorkflow`) and agent tasks (`agentTaskWorkflow`) have workflows of their own.
 * Runs started as `sessionWorkflow` before they had (a subagent's key, or an input with `task`) are
 * still served here, by those workflows' code, which makes the same commands.
 */
export async function sessionWorkflow(input: SessionWorkflowInput): Promise<AgentTaskResult | void> {
  if (isSubagentKey(input.sessionKey)) return subagentWorkflow(input);
  if (input.task) return agentTaskWorkflow(input);
  await new SessionRun(input).open({ endsOnCancel: false }).serve();
}

function isSubagentKey(sessionKey: string): boolean {
  try {
    return parseSessionKey(sessionKey).kind === 'subagent';
  } catch {
    return false;
  }
}
