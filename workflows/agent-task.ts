import * as wf from '@temporalio/workflow';
import { FailureTypes, type AgentTaskResult, type RequestOutcome, type SessionWorkflowInput } from '../src/protocol';
import { SessionRun } from './session-run';

/**
 * An application's agent task (`runAgentTask`, `input.task`), started as a child of the
 * application's workflow: it answers its first request, then ends with that answer as its result (a
 * failed request fails it with the request's failure type; a cancel cancels the turn and the task).
 * Later requests are refused, and maintenance waits for the session's next turn (its pre-call check
 * compacts when the context no longer fits).
 */
export async function agentTaskWorkflow(input: SessionWorkflowInput): Promise<AgentTaskResult> {
  let answer: RequestOutcome | undefined;
  const run = new SessionRun(input).open({
    endsOnCancel: true,
    closesWithWork: true,
    settled: async (request, outcome) => {
      if (request.requestId === input.firstRequest?.requestId) answer = outcome;
    },
    ended: () => (answer ? TASK_ENDED : undefined),
  });
  await run.serve();
  return agentTaskResult(input.sessionKey, answer);
}

/** A request that reached the task after its answer. */
const TASK_ENDED = {
  status: 'failed',
  type: FailureTypes.InvalidInput,
  message: 'this agent task has ended; send the message again to continue its session',
} as const;

/**
 * An agent task's result, or its request's failure as a non-retryable failure of the task's workflow
 * (the parent sees it as the cause of a ChildWorkflowFailure, with the type from FailureTypes).
 */
function agentTaskResult(sessionKey: string, outcome: RequestOutcome | undefined): AgentTaskResult {
  if (outcome?.status === 'done' && 'turn' in outcome) {
    const { reply, silent, usage, modelCalls, toolCalls = [], toolCallsOmitted, stopReason } = outcome.turn;
    return {
      reply,
      silent,
      sessionKey,
      usage,
      modelCalls,
      toolCalls,
      ...(toolCallsOmitted ? { toolCallsOmitted } : {}),
      ...(stopReason ? { stopReason } : {}),
    };
  }
  if (outcome?.status === 'failed') throw wf.ApplicationFailure.nonRetryable(outcome.message, outcome.type);
  throw wf.ApplicationFailure.nonRetryable(
    'the agent task ended without answering its request',
    FailureTypes.TurnFailed,
  );
}
