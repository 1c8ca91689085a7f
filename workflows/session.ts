import * as wf from '@temporalio/workflow';
import {
  FailureTypes,
  awaitResultUpdate,
  cancelRequestSignal,
  enqueueSignal,
  statusQuery,
  type RequestOutcome,
  type SessionRequest,
  type SessionWorkflowInput,
} from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';
import { checkCompactRequest, checkTurnRequest } from '../src/sessions/validate-request';
import { SessionState, type SessionJob } from './session-state';
import { SessionSteps, db } from './session-steps';
import { describeFailure, failureType } from './describe-failure';
import { parseSessionKey } from '../src/sessions/session-key';
import { IDLE_TIMER_ACROSS_TURNS, IdleTimer } from './idle-timer';

/**
 * One long-lived workflow per (agentId, sessionKey). Its identity replaces OpenClaw's session write
 * lock. Requests arrive by the `awaitResult` Update that carries them (Update-with-Start: admitted and
 * awaited in one call) or, past Temporal's in-flight Update limit, by Signal (`enqueue`, no limit);
 * either way in arrival order, run one at a time from a single loop; senders collect outcomes with
 * `awaitResult`. Maintenance a turn calls for (memory flush, threshold compaction) runs after its
 * reply, before the next request.
 *
 * The loop ends by continue-as-new (Temporal suggests it, or every `maxTurnsPerRun` turns), carrying
 * queued requests and uncollected outcomes, or by closing after a quiet period (counters saved; the
 * next message starts a fresh run that reads them back).
 *
 * A subagent's session is the same workflow, started by its parent as a child: after each request it
 * announces the outcome to the parent (the last of a burst); a `run` child then ends. A cancel (kill)
 * is announced too, and the run ends as cancelled.
 */
export async function sessionWorkflow(input: SessionWorkflowInput): Promise<void> {
  const state = new SessionState(input);
  const steps = new SessionSteps(input, state);
  const tuning = input.tuning ?? {};
  const maxTurnsPerRun = tuning.maxTurnsPerRun ?? DEFAULTS.maxTurnsPerRun;
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
  wf.setHandler(statusQuery, () => state.status(input));
  // The turn running now, in a scope of its own so that its sender can cancel it alone.
  let running: { readonly requestId: string; readonly scope: wf.CancellationScope; cancelled: boolean } | undefined;
  wf.setHandler(cancelRequestSignal, ({ requestId }) => {
    if (state.withdraw(requestId)) state.settle(requestId, CANCELLED);
    else if (running?.requestId === requestId && !running.cancelled) {
      running.cancelled = true;
      running.scope.cancel();
    }
  });

  // A request for a session that does not exist (`keel compact <typo>`) leaves nothing running behind it.
  let nothingToKeep = false;
  // A `run` subagent announced its result: the run is over.
  let ended = false;
  const subagent = isSubagentKey(input.sessionKey);
  // A spawned child's task, admitted when its first run starts.
  if (input.firstRequest && !input.carried) state.admit(input.firstRequest);
  try {
    await serve();
  } catch (err) {
    if (!subagent || !wf.isCancellation(err)) throw err;
    // Killed: the parent hears it as the child's outcome, then the run ends cancelled.
    await wf.CancellationScope.nonCancellable(() => steps.announce('killed', 'killed'));
    throw err;
  }

  async function serve(): Promise<void> {
    // A fresh run after an idle close: the counters the last run saved.
    if (!input.carried) {
      const saved = await db.loadSessionCounters({ agentId: input.agentId, sessionKey: input.sessionKey });
      if (saved) state.restore(saved);
    }

    let idle = false;
    const shouldContinueAsNew = () =>
      (wf.workflowInfo().continueAsNewSuggested || state.turnsThisRun >= maxTurnsPerRun) && state.carriedBytes() < DEFAULTS.maxCarriedBytes;
    const ready = () => state.hasWork() || shouldContinueAsNew();
    // Runs started on this code keep one quiet-period timer across turns; older histories replay with
    // a timer per wait.
    const idleTimer = wf.patched(IDLE_TIMER_ACROSS_TURNS) ? new IdleTimer(idleCloseMs) : undefined;

    for (;;) {
      // Wait only when there is nothing to do.
      const woke = state.hasWork() || (await (idleTimer ? idleTimer.wait(ready) : wf.condition(ready, idleCloseMs)));
      if (shouldContinueAsNew()) break;
      if (!woke && !state.hasWork()) {
        idle = true;
        break;
      }
      const job = state.next();
      if (job) await runJob(job);
      state.jobDone();
      idleTimer?.busy();
      if (ended) {
        idle = true;
        break;
      }
      if (nothingToKeep && !state.hasWork()) {
        idle = true;
        break;
      }
    }

    // Closing for a session that does not exist: its sender is about to ask for the outcome; wait for that.
    if (nothingToKeep) await wf.condition(() => !state.hasUncollected(), DEFAULTS.unknownSessionLingerMs);
    // Senders still waiting are told to ask again; they reach the next run (or restart the session).
    state.draining = true;
    await wf.condition(wf.allHandlersFinished);
    if (idle && !state.hasWork()) {
      await db.saveSessionCounters({ agentId: input.agentId, sessionKey: input.sessionKey, counters: state.carried() });
      return;
    }
    // The window the worker reported rides along too: status in the new run must not fall back to the default.
    await wf.continueAsNew<typeof sessionWorkflow>({ ...input, contextWindowTokens: state.contextWindow, carried: state.carried() });
  }

  async function runJob(job: SessionJob): Promise<void> {
    if (job.kind === 'maintenance') {
      if (job.job.kind === 'compaction') await steps.thresholdCompaction(job.job.sessionId);
      else await steps.softThresholdFlush(job.job.sessionId);
      return;
    }
    const outcome = await runRequest(job.request);
    nothingToKeep = outcome.status === 'failed' && outcome.type === FailureTypes.UnknownSession && state.turnsCompleted === 0;
    state.settle(job.request.requestId, outcome);
    // A subagent reports once its queue is empty: the parent gets the answer to the last message.
    if (subagent && 'turn' in job.request && !state.hasQueuedRequests()) {
      ended = (await steps.announce(job.request.requestId, outcome)).ended;
    }
  }

  /** A request's outcome; a failure is the request's, and the session goes on with the next one. */
  async function runRequest(request: SessionRequest): Promise<RequestOutcome> {
    const problem = 'turn' in request ? checkTurnRequest(request.turn) : checkCompactRequest(request.compact);
    if (problem) return { status: 'failed', type: FailureTypes.InvalidInput, message: problem.message };
    // A cancelled turn: its scope (not the workflow's) was cancelled by cancelRequest.
    const cancelledTurn = () => running?.requestId === request.requestId && running.cancelled;
    try {
      if ('turn' in request) {
        const turn = request.turn;
        const scope = new wf.CancellationScope();
        running = { requestId: request.requestId, scope, cancelled: false };
        return { status: 'done', turn: await scope.run(() => steps.runTurn(turn, request.requestId)) };
      }
      return { status: 'done', compaction: await steps.manualCompaction(request.compact) };
    } catch (err) {
      // A bug in workflow code is not a request failure: let it fail the task and be fixed.
      if (!(err instanceof wf.TemporalFailure)) throw err;
      if (cancelledTurn() && wf.isCancellation(err)) return CANCELLED;
      // A killed subagent stops here; the kill is its outcome.
      if (subagent && wf.isCancellation(err)) throw err;
      wf.log.warn('request failed; the session goes on', { sessionKey: input.sessionKey, requestId: request.requestId, error: describeFailure(err) });
      return { status: 'failed', type: failureType(err, FailureTypes.TurnFailed), message: describeFailure(err) };
    } finally {
      running = undefined;
    }
  }
}

/** The outcome of a request its sender cancelled. */
const CANCELLED: RequestOutcome = { status: 'failed', type: FailureTypes.Cancelled, message: 'cancelled by its sender' };

function isSubagentKey(sessionKey: string): boolean {
  try {
    return parseSessionKey(sessionKey).kind === 'subagent';
  } catch {
    return false;
  }
}
