/**
 * Agent tasks inside an application's own workflows (`<package>/workflow`): a Keel session runs as a
 * child workflow on Keel's task queue and its answer comes back typed. Workflow code: deterministic,
 * bundled into the application's workflow bundle.
 */
import * as wf from '@temporalio/workflow';
import { AGENT_TASK_OWN_WORKFLOW_TYPE } from './patches';
import {
  DEFAULT_TASK_QUEUE,
  FailureTypes,
  AGENT_TASK_WORKFLOW_TYPE,
  SESSION_WORKFLOW_TYPE,
  type AgentPromptMode,
  type AgentTaskResult,
  type RunBudget,
  type SessionWorkflowInput,
} from '../src/protocol';
import { buildSessionKey, InvalidSessionKeyError, sessionWorkflowId } from '../src/sessions/session-key';
import { KeelAgentId, KeelSessionKey } from '../src/temporal/search-attributes';

export {
  FailureTypes,
  type AgentPromptMode,
  type AgentTaskResult,
  type RunBudget,
  type TokenUsage,
  type TurnStopReason,
  type TurnToolCall,
} from '../src/protocol';

/** One agent task. */
export interface AgentTask {
  /** What the agent is asked: the session's first user message. */
  readonly text: string;
  /** The agent (its `agents.<id>` section of keel.config.json); default `main`. */
  readonly agentId?: string;
  /**
   * The session the task runs in; default a new one per task, `agent:<agentId>:task-<uuid>`. It must
   * not be running: one session runs one thing at a time.
   */
  readonly sessionKey?: string;
  /** The system prompt mode; default the agent's rule for the session key (its `promptMode` for a main key). */
  readonly promptMode?: AgentPromptMode;
  /** Only these of the agent's tools (built-ins included); default all. An unknown name fails the task. */
  readonly tools?: readonly string[];
  /** The Keel workers' task queue (KEEL_TASK_QUEUE); default `keel`. */
  readonly taskQueue?: string;
  /**
   * The task's run budget over the agent's (model calls, tokens; `null` is no limit). At its budget
   * the task reports where it stands and its result carries `stopReason`.
   */
  readonly budget?: RunBudget;
}

/**
 * Runs one agent task as a child workflow (a Keel session on Keel's task queue) and returns its final
 * reply and usage.
 *
 * - Cancelled with the caller: cancelling the scope (or the workflow) that awaits it cancels the
 *   task's turn and its in-flight model call or tool; a parent that closes cancels it too.
 * - Retries nothing twice: the child has no retry policy, so a failed task is not run again from its
 *   start (its model calls and tools keep Keel's own per-step retries). A failed task rejects with a
 *   `ChildWorkflowFailure` whose `cause` is an `ApplicationFailure` with a `FailureTypes` type.
 * - Fan out with `Promise.all`: each task is a session of its own.
 * - With payload encryption, give the caller's worker the Keel workers' data converter
 *   (`keelDataConverter(keyRingFor(config))`) so both read each other's payloads.
 *
 * @example
 *   const [a, b] = await Promise.all([
 *     runAgentTask({ agentId: 'research', text: 'Summarize issue 12' }),
 *     runAgentTask({ agentId: 'research', text: 'Summarize issue 13', tools: ['history_search'] }),
 *   ]);
 */
export async function runAgentTask(task: AgentTask): Promise<AgentTaskResult> {
  const agentId = task.agentId ?? 'main';
  const { sessionKey, workflowId } = taskSession(agentId, task.sessionKey);
  const input: SessionWorkflowInput = {
    agentId,
    sessionKey,
    firstRequest: {
      requestId: `task:${wf.uuid4()}`,
      turn: { text: task.text, streamReply: false, ...(task.budget ? { budget: task.budget } : {}) },
    },
    task: {
      ...(task.promptMode ? { promptMode: task.promptMode } : {}),
      ...(task.tools ? { tools: [...task.tools] } : {}),
    },
  };
  const result = await wf.executeChild<(i: SessionWorkflowInput) => Promise<AgentTaskResult>>(taskWorkflowType(), {
    workflowId,
    taskQueue: task.taskQueue ?? DEFAULT_TASK_QUEUE,
    args: [input],
    // A parent that ends (terminated, timed out) takes its tasks with it, letting each stop its turn cleanly.
    parentClosePolicy: wf.ParentClosePolicy.REQUEST_CANCEL,
    memo: { parentWorkflowId: wf.workflowInfo().workflowId },
    typedSearchAttributes: [
      { key: KeelAgentId, value: agentId },
      { key: KeelSessionKey, value: sessionKey },
    ],
  });
  return result;
}

/** The workflow type a task's child starts as (its own, unless the caller's history started tasks as sessions). */
function taskWorkflowType(): string {
  return wf.patched(AGENT_TASK_OWN_WORKFLOW_TYPE) ? AGENT_TASK_WORKFLOW_TYPE : SESSION_WORKFLOW_TYPE;
}

/** The task's session and its workflow id; a bad agent id or key fails the caller's workflow, not its task (retrying cannot fix it). */
function taskSession(agentId: string, given: string | undefined): { sessionKey: string; workflowId: string } {
  try {
    const sessionKey = given ?? buildSessionKey({ kind: 'main', agentId, mainKey: `task-${wf.uuid4()}` });
    return { sessionKey, workflowId: sessionWorkflowId(agentId, sessionKey) };
  } catch (err) {
    if (err instanceof InvalidSessionKeyError)
      throw wf.ApplicationFailure.nonRetryable(err.message, FailureTypes.InvalidInput);
    throw err;
  }
}
