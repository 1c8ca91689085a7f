/**
 * One run of a session's loop, shared by the three lifecycles (`session.ts`, `subagent.ts`,
 * `agent-task.ts`): the handlers clients reach, the queue run one job at a time, and the run's end
 * (an idle close, or continue-as-new carrying what is left). A lifecycle adds what happens after a
 * request and when its run is over.
 */
import * as wf from '@temporalio/workflow';
import {
  FailureTypes,
  type RequestOutcome,
  type SessionCarriedState,
  type SessionRequest,
  type SessionWorkflowInput,
  type SuspendedTurn,
} from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';
import { checkCompactRequest, checkTurnRequest } from '../src/sessions/validate-request';
import type { SessionJob } from './session-state';
import { SessionSteps } from './session-steps';
import { SessionJobs } from './session-jobs';
import { localActivities } from './local-activities';
import { SessionContext } from './session-context';
import { describeFailure, failureType } from './describe-failure';
import { IdleTimer } from './idle-timer';
import { TurnSuspended } from './turn-suspended';
import { CANCELLED, setSessionHandlers, type RunningRequest } from './session-handlers';

/** What one lifecycle adds to the shared loop. */
export interface Lifecycle {
  /** A cancelled turn ends the run (a killed subagent, a cancelled task) instead of being the request's outcome. */
  readonly endsOnCancel: boolean;
  /** Whether a steer may join the run now; absent: always. */
  steerVerdict?(): 'admit' | 'wait' | 'refuse' | undefined;
  /** After a request settled: what the lifecycle owes someone for it (an announce, a task's answer). */
  settled?(request: SessionRequest, outcome: RequestOutcome): Promise<void>;
  /** The run is over: later requests get this outcome instead of running. */
  ended?(): RequestOutcome | undefined;
  /** The run closes once ended even with maintenance left (it waits for the session's next turn). */
  readonly closesWithWork?: boolean;
  /** What the lifecycle carries across continue-as-new. */
  carried?(): Partial<SessionCarriedState>;
}

/** The shared loop of one run, over one context, with a lifecycle's additions. */
export class SessionRun {
  readonly ctx: SessionContext;
  readonly steps: SessionSteps;
  readonly jobs: SessionJobs;
  /** The turn running now, in a scope of its own so that its sender can cancel it alone. */
  private readonly running: RunningRequest = { now: undefined };
  private lifecycle: Lifecycle = { endsOnCancel: false };
  /** A request for a session that does not exist (`keel compact <typo>`), or for an agent this worker does not serve, leaves nothing running behind it. */
  private nothingToKeep = false;

  constructor(input: SessionWorkflowInput) {
    this.ctx = new SessionContext(input);
    this.jobs = new SessionJobs(this.ctx);
    this.steps = new SessionSteps(this.ctx, this.jobs);
  }

  /** Sets the handlers clients reach (they read the lifecycle when called), then admits a spawned child's task. */
  open(lifecycle: Lifecycle): this {
    this.lifecycle = lifecycle;
    setSessionHandlers(this.ctx, this.running, () => this.lifecycle.steerVerdict?.());
    // A spawned child's task, admitted when its first run starts.
    const { input, state } = this.ctx;
    if (input.firstRequest && !input.carried) state.admit(input.firstRequest);
    return this;
  }

  /** Runs jobs until the run ends: closed when idle (counters saved), or continued as new. */
  async serve(): Promise<void> {
    const { input, state } = this.ctx;
    // A fresh run after an idle close: the counters the last run saved.
    if (!input.carried) {
      const saved = await localActivities.loadSessionCounters(this.ctx.ids);
      if (saved) state.restore(saved);
    }
    // A turn waiting for approval stops at its wait when the run must continue as new, and is handed on.
    this.ctx.approvals.suspendWhen(() => this.ctx.shouldHandOn());
    // The turn the last run handed on runs first, from where it stopped.
    const handedOn = input.carried?.suspendedTurn;
    const resumed = handedOn
      ? await this.runSuspendable({ kind: 'request', request: handedOn.request }, handedOn)
      : undefined;
    const { idle, suspended } = resumed ? { idle: false, suspended: resumed } : await this.loop();
    await this.close(idle, suspended);
  }

  /** Waits for work and runs it, one job at a time, until the run is idle, ended, or due to hand on. */
  private async loop(): Promise<{ idle: boolean; suspended?: SuspendedTurn }> {
    const { state } = this.ctx;
    const ready = () => state.hasWork() || this.ctx.shouldHandOn();
    // One quiet-period timer across turns, not one started and cancelled around each wait.
    const idleTimer = new IdleTimer(this.ctx.input.tuning?.idleCloseMs ?? DEFAULTS.sessionIdleCloseMs);
    for (;;) {
      // Wait only when there is nothing to do.
      const woke = state.hasWork() || (await idleTimer.wait(ready));
      if (this.ctx.shouldHandOn()) return { idle: false };
      if (!woke && !state.hasWork()) {
        if (!this.ctx.background.isRunning()) return { idle: true };
        // A compaction beside the session signals this run when it lands: the run stays open for it.
        await wf.condition(() => !this.ctx.background.isRunning() || ready());
        continue;
      }
      const job = state.next();
      const suspended = job ? await this.runSuspendable(job) : undefined;
      state.jobDone();
      if (suspended) return { idle: false, suspended };
      idleTimer.busy();
      if (this.lifecycle.ended?.()) return { idle: true };
      if (this.nothingToKeep && !state.hasWork()) return { idle: true };
    }
  }

  /** The run's end: queued requests of an ended run refused, handlers finished, then closed or continued as new. */
  private async close(idle: boolean, suspended: SuspendedTurn | undefined): Promise<void> {
    const { input, state } = this.ctx;
    // Requests that reached an ended run are not run: nobody would hear their answer.
    const refusal = this.lifecycle.ended?.();
    if (refusal && state.hasQueuedRequests()) state.refuseQueued(refusal);
    // Closing for a session that does not exist: its sender is about to ask for the outcome; wait for that.
    if (this.nothingToKeep) await wf.condition(() => !state.hasUncollected(), DEFAULTS.unknownSessionLingerMs);
    // Senders still waiting are told to ask again; they reach the next run (or restart the session).
    state.draining = true;
    await wf.condition(wf.allHandlersFinished);
    const closesWithWork = refusal !== undefined && this.lifecycle.closesWithWork === true;
    if (idle && (!state.hasWork() || closesWithWork)) {
      await localActivities.saveSessionCounters(this.ctx.withIds({ counters: state.carried() }));
      return;
    }
    // The window the worker reported rides along too: status in the new run must not fall back to the default.
    const carried = {
      ...state.carried(),
      ...this.ctx.background.carried(),
      ...this.lifecycle.carried?.(),
      ...(suspended ? { suspendedTurn: suspended } : {}),
    };
    await wf.continueAsNew<(i: SessionWorkflowInput) => Promise<unknown>>({
      ...input,
      contextWindowTokens: state.contextWindow,
      carried,
    });
  }

  /** Runs a job; a turn that stopped at an approval wait for continue-as-new returns what the next run needs. */
  private async runSuspendable(job: SessionJob, resume?: SuspendedTurn): Promise<SuspendedTurn | undefined> {
    try {
      await this.runJob(job, resume);
      return undefined;
    } catch (err) {
      if (!(err instanceof TurnSuspended)) throw err;
      return err.state();
    }
  }

  private async runJob(job: SessionJob, resume?: SuspendedTurn): Promise<void> {
    const { state } = this.ctx;
    if (job.kind === 'maintenance') {
      if (job.job.kind === 'memoryFlush') await this.jobs.softThresholdFlush(job.job.sessionId);
      else if (job.job.trigger === 'soft') await this.jobs.startBeside(job.job.sessionId, 'soft');
      else await this.jobs.thresholdCompaction(job.job.sessionId);
      return;
    }
    const outcome = await this.runRequest(job.request, resume);
    this.nothingToKeep = outcome.status === 'failed' && leavesNothing(outcome.type) && state.turnsCompleted === 0;
    state.settle(job.request.requestId, outcome);
    await this.lifecycle.settled?.(job.request, outcome);
  }

  /** A request's outcome; a failure is the request's, and the session goes on with the next one. */
  private async runRequest(request: SessionRequest, resume?: SuspendedTurn): Promise<RequestOutcome> {
    const problem = 'turn' in request ? checkTurnRequest(request.turn) : checkCompactRequest(request.compact);
    if (problem) return { status: 'failed', type: FailureTypes.InvalidInput, message: problem.message };
    // A cancelled turn: its scope (not the workflow's) was cancelled by cancelRequest.
    const cancelledTurn = () => this.running.now?.requestId === request.requestId && this.running.now.cancelled;
    try {
      if ('turn' in request) {
        const turn = request.turn;
        const scope = new wf.CancellationScope();
        this.running.now = { requestId: request.requestId, scope, cancelled: false };
        const run = () => (resume ? this.steps.resumeTurn(resume) : this.steps.runTurn(turn, request.requestId));
        return { status: 'done', turn: await scope.run(run) };
      }
      return { status: 'done', compaction: await this.jobs.manualCompaction(request.compact) };
    } catch (err) {
      // A bug in workflow code is not a request failure: let it fail the task and be fixed.
      if (!(err instanceof wf.TemporalFailure)) throw err;
      if (cancelledTurn() && wf.isCancellation(err)) {
        // What it wrote stays in the transcript, marked by the next turn's begin, and reaches no model again.
        this.ctx.state.turnCancelled(this.steps.current);
        return CANCELLED;
      }
      if (this.lifecycle.endsOnCancel && wf.isCancellation(err)) throw err;
      return this.failed(request, err);
    } finally {
      this.running.now = undefined;
      this.ctx.state.turnRunning(undefined);
    }
  }

  /** A request that failed: logged, and its outcome names the failure's type. */
  private failed(request: SessionRequest, err: wf.TemporalFailure): RequestOutcome {
    wf.log.warn('request failed; the session goes on', {
      sessionKey: this.ctx.input.sessionKey,
      requestId: request.requestId,
      error: describeFailure(err),
    });
    return { status: 'failed', type: failureType(err, FailureTypes.TurnFailed), message: describeFailure(err) };
  }
}

/** A failure after which a run that completed no turn has nothing to keep: no such session, or an agent this worker does not serve. */
function leavesNothing(type: string): boolean {
  return type === FailureTypes.UnknownSession || type === FailureTypes.AgentNotAllowed;
}
