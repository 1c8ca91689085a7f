import * as wf from '@temporalio/workflow';
import {
  FailureTypes,
  awaitResultUpdate,
  cancelRequestSignal,
  decideApprovalUpdate,
  enqueueSignal,
  statusQuery,
  steerUpdate,
  type AgentTaskResult,
  type RequestOutcome,
  type SessionRequest,
  type SessionWorkflowInput,
  type SuspendedTurn,
} from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';
import { checkCompactRequest, checkTurnRequest } from '../src/sessions/validate-request';
import { SessionState, type SessionJob } from './session-state';
import { SessionSteps, localActivities } from './session-steps';
import { describeFailure, failureType } from './describe-failure';
import { parseSessionKey } from '../src/sessions/session-key';
import { IdleTimer } from './idle-timer';
import { SubagentRunReport } from './subagent-run-report';
import { ApprovalBook, checkApprovalDecision } from './approval-book';
import { TurnSuspended } from './turn-suspended';

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
 * A subagent's session is the same workflow, started by its parent as a child: when its queue is
 * empty it announces every answer of the run to the parent at once (the task's, then the steers'); a
 * `run` child then ends and refuses later steers. A cancel (kill) is announced too, with the answers
 * not yet told, and the run ends as cancelled.
 *
 * An application's agent task (`runAgentTask`, `input.task`) is the same workflow started as a child
 * of the application's workflow: it answers its first request, then ends with that answer as its
 * result (a failed request fails it with the request's failure type; a cancel cancels the turn).
 */
export async function sessionWorkflow(input: SessionWorkflowInput): Promise<AgentTaskResult | void> {
  const state = new SessionState(input);
  const approvals = new ApprovalBook();
  const tuning = input.tuning ?? {};
  const maxTurnsPerRun = tuning.maxTurnsPerRun ?? DEFAULTS.maxTurnsPerRun;
  const steps = new SessionSteps(
    input,
    state,
    approvals,
    () => wf.workflowInfo().continueAsNewSuggested || state.turnsThisRun >= maxTurnsPerRun,
    () => state.carriedBytes() < DEFAULTS.maxCarriedBytes,
  );
  const idleCloseMs = tuning.idleCloseMs ?? DEFAULTS.sessionIdleCloseMs;

  wf.setHandler(enqueueSignal, (request) => state.admit(request));
  wf.setHandler(awaitResultUpdate, async ({ requestId, request }) => {
    // Admitted while draining too, as a signal would be: the queue rides to the next run.
    if (request?.requestId === requestId) state.admit(request);
    await wf.condition(() => state.outcome(requestId) !== undefined);
    const outcome = state.outcome(requestId)!;
    state.collected(requestId);
    return outcome;
  });
  wf.setHandler(statusQuery, () => {
    const pendingApprovals = approvals.pending();
    return { ...state.status(input), ...(pendingApprovals.length > 0 ? { pendingApprovals } : {}) };
  });
  // A person's decision on a waiting tool call; a repeat gets the first outcome back.
  wf.setHandler(
    decideApprovalUpdate,
    (decision) => {
      const outcome = approvals.decide(decision, new Date().toISOString());
      if (outcome) return outcome;
      throw wf.ApplicationFailure.nonRetryable(
        `no tool call of this session waits for approval ${decision.approvalId}`,
        FailureTypes.UnknownApproval,
      );
    },
    { validator: checkApprovalDecision },
  );
  // The turn running now, in a scope of its own so that its sender can cancel it alone.
  let running: { readonly requestId: string; readonly scope: wf.CancellationScope; cancelled: boolean } | undefined;
  wf.setHandler(cancelRequestSignal, ({ requestId }) => {
    if (state.withdraw(requestId)) state.settle(requestId, CANCELLED);
    else if (running?.requestId === requestId && !running.cancelled) {
      running.cancelled = true;
      running.scope.cancel();
    }
  });

  const subagent = isSubagentKey(input.sessionKey);
  // What a subagent owes its parent; other sessions have no parent to tell.
  const report = subagent ? new SubagentRunReport(input.carried?.subagentAnswers) : undefined;
  wf.setHandler(
    steerUpdate,
    async (request) => {
      // Mid-announce a steer can be neither in the announce nor refused yet: it waits to be one of them.
      try {
        await wf.condition(() => report?.steerVerdict() !== 'wait');
      } catch (err) {
        if (wf.isCancellation(err)) return { admitted: false, reason: 'it is being killed' };
        throw err;
      }
      if (report?.steerVerdict() === 'refuse') return { admitted: false, reason: 'its result was announced' };
      state.admit(request);
      return { admitted: true };
    },
    { validator: (request) => void checkSteer(request) },
  );

  // A request for a session that does not exist (`keel compact <typo>`), or for an agent this worker
  // does not serve, leaves nothing running behind it.
  let nothingToKeep = false;
  // A spawned child's task, admitted when its first run starts.
  if (input.firstRequest && !input.carried) state.admit(input.firstRequest);
  // An agent task's answer: the run ends with it.
  let taskOutcome: RequestOutcome | undefined;
  try {
    await serve();
    if (input.task) return agentTaskResult(input.sessionKey, taskOutcome);
  } catch (err) {
    if (!report || !wf.isCancellation(err)) throw err;
    // Killed: the parent hears it as the child's outcome (with the answers not yet told), then the
    // run ends cancelled. A run that already announced its end has told everything.
    if (!report.ended) await wf.CancellationScope.nonCancellable(() => steps.announce(report.pending(), 'killed'));
    throw err;
  }

  async function serve(): Promise<void> {
    // A fresh run after an idle close: the counters the last run saved.
    if (!input.carried) {
      const saved = await localActivities.loadSessionCounters({ agentId: input.agentId, sessionKey: input.sessionKey });
      if (saved) state.restore(saved);
    }

    let idle = false;
    const shouldContinueAsNew = () =>
      (wf.workflowInfo().continueAsNewSuggested || state.turnsThisRun >= maxTurnsPerRun) &&
      state.carriedBytes() < DEFAULTS.maxCarriedBytes;
    const ready = () => state.hasWork() || shouldContinueAsNew();
    // A turn waiting for approval stops at its wait when the run must continue as new, and is handed on.
    approvals.suspendWhen(shouldContinueAsNew);
    // The turn the last run handed on runs first, from where it stopped.
    const handedOn = input.carried?.suspendedTurn;
    let suspended = handedOn
      ? await runSuspendable({ kind: 'request', request: handedOn.request }, handedOn)
      : undefined;
    // One quiet-period timer across turns, not one started and cancelled around each wait.
    const idleTimer = new IdleTimer(idleCloseMs);

    while (!suspended) {
      // Wait only when there is nothing to do.
      const woke = state.hasWork() || (await idleTimer.wait(ready));
      if (shouldContinueAsNew()) break;
      if (!woke && !state.hasWork()) {
        idle = true;
        break;
      }
      const job = state.next();
      if (job) suspended = await runSuspendable(job);
      state.jobDone();
      if (suspended) break;
      idleTimer.busy();
      if (report?.ended || taskOutcome) {
        idle = true;
        break;
      }
      if (nothingToKeep && !state.hasWork()) {
        idle = true;
        break;
      }
    }

    // Requests that reached an ended `run` child after its last announce are not run: nobody hears their answer.
    if (report?.ended && state.hasQueuedRequests()) {
      state.refuseQueued({
        status: 'failed',
        type: FailureTypes.InvalidInput,
        message: 'this subagent has ended; its parent can spawn a new one',
      });
    }
    // An agent task ends with its answer: later requests are not run (nobody would hear them), and
    // maintenance waits for the session's next turn (its pre-call check compacts when the context no longer fits).
    if (taskOutcome && state.hasQueuedRequests()) {
      state.refuseQueued({
        status: 'failed',
        type: FailureTypes.InvalidInput,
        message: 'this agent task has ended; send the message again to continue its session',
      });
    }
    // Closing for a session that does not exist: its sender is about to ask for the outcome; wait for that.
    if (nothingToKeep) await wf.condition(() => !state.hasUncollected(), DEFAULTS.unknownSessionLingerMs);
    // Senders still waiting are told to ask again; they reach the next run (or restart the session).
    state.draining = true;
    await wf.condition(wf.allHandlersFinished);
    if (idle && (!state.hasWork() || taskOutcome)) {
      await localActivities.saveSessionCounters({
        agentId: input.agentId,
        sessionKey: input.sessionKey,
        counters: state.carried(),
      });
      return;
    }
    // The window the worker reported rides along too: status in the new run must not fall back to the default.
    const answers = report?.pending() ?? [];
    const carried = {
      ...state.carried(),
      ...(answers.length > 0 ? { subagentAnswers: answers } : {}),
      ...(suspended ? { suspendedTurn: suspended } : {}),
    };
    await wf.continueAsNew<typeof sessionWorkflow>({ ...input, contextWindowTokens: state.contextWindow, carried });
  }

  /** Runs a job; a turn that stopped at an approval wait for continue-as-new returns what the next run needs. */
  async function runSuspendable(job: SessionJob, resume?: SuspendedTurn): Promise<SuspendedTurn | undefined> {
    try {
      await runJob(job, resume);
      return undefined;
    } catch (err) {
      if (!(err instanceof TurnSuspended)) throw err;
      return err.state();
    }
  }

  async function runJob(job: SessionJob, resume?: SuspendedTurn): Promise<void> {
    if (job.kind === 'maintenance') {
      if (job.job.kind === 'compaction') await steps.thresholdCompaction(job.job.sessionId);
      else await steps.softThresholdFlush(job.job.sessionId);
      return;
    }
    const outcome = await runRequest(job.request, resume);
    nothingToKeep = outcome.status === 'failed' && leavesNothing(outcome.type) && state.turnsCompleted === 0;
    state.settle(job.request.requestId, outcome);
    if (input.task && job.request.requestId === input.firstRequest?.requestId) taskOutcome = outcome;
    // A subagent reports once its queue is empty: the parent gets every answer of the run in one announce.
    const answers =
      report && 'turn' in job.request
        ? report.answered(job.request.requestId, outcome, state.hasQueuedRequests())
        : undefined;
    if (report && answers) {
      // Not cut short by a kill: once sent, it is the run's one announce, and the kill must know that.
      const announce = () => steps.announce(answers);
      const { ended } = await wf.CancellationScope.nonCancellable(announce);
      report.announced(ended);
    }
  }

  /** A request's outcome; a failure is the request's, and the session goes on with the next one. */
  async function runRequest(request: SessionRequest, resume?: SuspendedTurn): Promise<RequestOutcome> {
    const problem = 'turn' in request ? checkTurnRequest(request.turn) : checkCompactRequest(request.compact);
    if (problem) return { status: 'failed', type: FailureTypes.InvalidInput, message: problem.message };
    // A cancelled turn: its scope (not the workflow's) was cancelled by cancelRequest.
    const cancelledTurn = () => running?.requestId === request.requestId && running.cancelled;
    try {
      if ('turn' in request) {
        const turn = request.turn;
        const scope = new wf.CancellationScope();
        running = { requestId: request.requestId, scope, cancelled: false };
        const run = () => (resume ? steps.resumeTurn(resume) : steps.runTurn(turn, request.requestId));
        return { status: 'done', turn: await scope.run(run) };
      }
      return { status: 'done', compaction: await steps.manualCompaction(request.compact) };
    } catch (err) {
      // A bug in workflow code is not a request failure: let it fail the task and be fixed. A turn
      // suspended for continue-as-new is not one either: it goes on in the next run.
      if (!(err instanceof wf.TemporalFailure)) throw err;
      if (cancelledTurn() && wf.isCancellation(err)) {
        // What it wrote stays in the transcript, marked by the next turn's begin, and reaches no model again.
        state.turnCancelled(steps.current);
        return CANCELLED;
      }
      // A killed subagent stops here; the kill is its outcome. A cancelled task ends cancelled, as its parent asked.
      if ((subagent || input.task) && wf.isCancellation(err)) throw err;
      wf.log.warn('request failed; the session goes on', {
        sessionKey: input.sessionKey,
        requestId: request.requestId,
        error: describeFailure(err),
      });
      return { status: 'failed', type: failureType(err, FailureTypes.TurnFailed), message: describeFailure(err) };
    } finally {
      running = undefined;
      state.turnRunning(undefined);
    }
  }
}

/** A failure after which a run that completed no turn has nothing to keep: no such session, or an agent this worker does not serve. */
function leavesNothing(type: string): boolean {
  return type === FailureTypes.UnknownSession || type === FailureTypes.AgentNotAllowed;
}

/** A steer is a turn request: a compaction is not a message to a subagent. */
function checkSteer(request: SessionRequest): void {
  if (!request || typeof request.requestId !== 'string' || !('turn' in request))
    throw new Error('a steer is a turn request: { requestId, turn: { text } }');
  const problem = checkTurnRequest(request.turn);
  if (problem) throw new Error(problem.message);
}

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

/** The outcome of a request its sender cancelled. */
const CANCELLED: RequestOutcome = {
  status: 'failed',
  type: FailureTypes.Cancelled,
  message: 'cancelled by its sender',
};

function isSubagentKey(sessionKey: string): boolean {
  try {
    return parseSessionKey(sessionKey).kind === 'subagent';
  } catch {
    return false;
  }
}
