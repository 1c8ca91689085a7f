/**
 * A turn, step by step: begin and first model call, model ⇄ tools (approvals, spawns), end. Every
 * lifecycle's loop (`session-run.ts`) decides when; this module decides how; the jobs a turn may
 * need (a compaction) are `session-jobs.ts`. Workflow code: deterministic, activities only.
 */
import * as wf from '@temporalio/workflow';
import { SUBAGENT_OWN_WORKFLOW_TYPE } from './patches';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type {
  createTurnActivities,
  BeginTurnInput,
  BeginTurnResult,
  OverflowBegun,
} from '../activities/turn-activities';
import type { CallModelInput, CallModelResult, ModelCallOutcome } from '../activities/parts/model-call';
import type { FinishTurnResult } from '../activities/parts/turn-finish';
import type { createToolActivities, RunToolInput, RunToolResult } from '../activities/tool-activities';
import {
  FailureTypes,
  SESSIONS_SPAWN_TOOL,
  SESSION_WORKFLOW_TYPE,
  SUBAGENT_WORKFLOW_TYPE,
  type CompactionWorkflowResult,
  type SessionCarriedState,
  type SessionWorkflowInput,
  type TurnRequest,
  type PendingApproval,
  type SuspendedAtApproval,
  type SuspendedTurn,
  type ToolCallApproval,
  type TurnResult,
} from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';
import { NO_USAGE } from '../src/turn/token-usage';
import type { SessionState } from './session-state';
import { describeFailure, toolFailureText } from './describe-failure';
import { sessionWorkflowId } from '../src/sessions/session-key';
import { KeelAgentId, KeelParentSessionKey, KeelSessionKey } from '../src/temporal/search-attributes';
import { TurnTiming } from './turn-timing';
import { TurnProgress } from './turn-progress';
import type { SessionContext } from './session-context';
import { ApprovalSteps } from './approval-steps';
import { localActivities } from './local-activities';
import { SessionJobs, now } from './session-jobs';
import { TurnSuspended } from './turn-suspended';

type TurnActivities = ReturnType<typeof createTurnActivities>;
type ToolActivities = ReturnType<typeof createToolActivities>;

/** A model call already made by `startTurn`: what it answered, or how it failed. */
type FirstCall = { readonly outcome: ModelCallOutcome } | { readonly error: unknown };

/** The steps of a turn over its run's context; they read and write the run's state. */
export class SessionSteps {
  private readonly model: TurnActivities;
  private readonly tools: ToolActivities;
  private readonly approvalSteps: ApprovalSteps;
  private readonly input: SessionWorkflowInput;
  private readonly state: SessionState;
  /** Model calls this workflow run made: a long turn hands itself on past `maxRoundsPerRun`. */
  private roundsThisRun = 0;
  /** The turn running now: its session and first entry (what a cancel marks). */
  current: { readonly userEntryId: string } | undefined;

  constructor(
    private readonly ctx: SessionContext,
    private readonly jobs: SessionJobs,
  ) {
    const { input } = ctx;
    this.input = input;
    this.state = ctx.state;
    this.approvalSteps = new ApprovalSteps(ctx.approvals, localActivities);
    const tuning = input.tuning ?? {};
    // Model calls stream for minutes; heartbeats notice a dead worker long before start-to-close.
    // Transient provider errors (429/529/5xx) retry for a time budget, honouring retry-after.
    this.model = wf.proxyActivities<TurnActivities>({
      startToCloseTimeout: '10m',
      scheduleToCloseTimeout: tuning.modelRetryBudgetMs ?? DEFAULTS.modelRetryBudgetMs,
      heartbeatTimeout: tuning.modelHeartbeatTimeoutMs ?? DEFAULTS.modelHeartbeatTimeoutMs,
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s' },
    });
    // A tool's errors, retries and timeout are settled inside the activity (its result says how), so
    // Temporal retries only a lost worker or a failed write, with the call's stable idempotency key.
    // Start-to-close is a backstop: a stuck or lost worker stops heartbeating long before it.
    // A database outage is waited out inside an attempt (`withOutageWait`), as long as a model call's
    // budget; the attempts are for lost workers, retried within seconds of a worker's return.
    this.tools = wf.proxyActivities<ToolActivities>({
      startToCloseTimeout: DEFAULTS.toolTimeoutMaxMs,
      heartbeatTimeout: tuning.toolHeartbeatTimeoutMs ?? DEFAULTS.toolHeartbeatTimeoutMs,
      retry: { initialInterval: '1s', maximumInterval: '5s', maximumAttempts: 3 },
    });
  }

  /**
   * One durable turn: the user's entry and the first model call (one activity), model and tool
   * calls until a final reply, which finishes the turn in the same statement; then its maintenance.
   */
  async runTurn(request: TurnRequest, requestId: string): Promise<TurnResult> {
    this.refuseStale(request);
    const touch = request.event === undefined || request.event === 'user_message';
    // Only a client listening for the reply's text gets it streamed on its request's channel.
    const turn = new TurnProgress(
      this.state.turnsCompleted + 1,
      wf.uuid4(),
      touch,
      request.streamReply === false ? undefined : requestId,
    );
    turn.thinking = request.thinking;
    const timing = new TurnTiming(this.ctx.ids);
    timing.step('model');
    // A cancel may come while the begin is still running: the turn is named by its first entry.
    this.current = { userEntryId: turn.userEntryId };
    const { begin, first } = await this.startTurn(request, turn);
    if (begin.budget) turn.budget = begin.budget;
    this.state.turnRunning(turn);
    // No model call was made: the step was the turn's begin alone.
    if (!first) timing.relabel('begin');
    // A reset leaves no subagent of the old session running unseen (their rows say killed).
    for (const workflowId of begin.orphanedChildren ?? []) await cancelQuietly(workflowId);
    // This subagent result already reached the session through another request: nothing to answer.
    if (begin.duplicate) return this.unanswered('');
    // A bare /new or /reset: the new session starts with the next message.
    if (begin.resetOnly) return this.unanswered('Started a new session.');
    if (begin.preflightCompaction) {
      timing.step('compaction');
      turn.compactedOnce();
      await this.jobs.compact(begin.sessionId, 'preflight', {}, turn);
    }
    let final: CallModelResult;
    try {
      final = await this.modelAndToolCalls(begin.sessionId, turn, timing, first);
    } catch (err) {
      if (err instanceof TurnSuspended)
        err.ofTurn({ request: { requestId, turn: request }, sessionId: begin.sessionId, progress: turn.snapshot() });
      throw err;
    }
    return this.endTurn(begin.sessionId, turn, timing, final);
  }

  /**
   * A turn the last run handed on: while one of its tool calls waited for approval (the wait goes on
   * with the time left, then the reply's remaining calls), or between two rounds of a long run (its
   * next model call). Then model calls as before.
   */
  async resumeTurn(suspended: SuspendedTurn): Promise<TurnResult> {
    const turn = TurnProgress.resumed(suspended.progress);
    const timing = new TurnTiming(this.ctx.ids);
    const { sessionId } = suspended;
    this.current = { userEntryId: turn.userEntryId };
    this.state.turnRunning(turn);
    const resumed =
      'approval' in suspended
        ? {
            reply: { kind: 'reply' as const, ...suspended.reply },
            callIndex: suspended.callIndex,
            approval: suspended.approval,
          }
        : undefined;
    let final: CallModelResult;
    try {
      final = await this.modelAndToolCalls(sessionId, turn, timing, undefined, resumed);
    } catch (err) {
      if (err instanceof TurnSuspended)
        err.ofTurn({ request: suspended.request, sessionId, progress: turn.snapshot() });
      throw err;
    }
    return this.endTurn(sessionId, turn, timing, final);
  }

  /** The turn's end after its final reply: its counters recorded, its maintenance scheduled, its result. */
  private async endTurn(
    sessionId: string,
    turn: TurnProgress,
    timing: TurnTiming,
    final: CallModelResult,
  ): Promise<TurnResult> {
    timing.step('finish');
    // The last call finished the turn unless the turn ran out of model calls with tool calls pending.
    const after = final.finished ?? (await this.finishWithoutReply(turn, final));
    this.state.recordTurn(turn.parentId, after, final.split);
    timing.finish({
      sessionId,
      turn: this.state.turnsCompleted,
      modelCalls: turn.modelCalls,
      usage: turn.usage,
    });
    // Maintenance runs after the reply is returned, before the next queued request. Past the
    // background share a compaction starts beside the session (results recorded before it have no `compactBeside`).
    if (after.compact) this.state.schedule({ kind: 'compaction', trigger: 'threshold', sessionId });
    else if (after.compactBeside && !this.ctx.background.isRunning())
      this.state.schedule({ kind: 'compaction', trigger: 'soft', sessionId });
    else if (after.memoryFlush && !this.ctx.background.isRunning())
      this.state.schedule({ kind: 'memoryFlush', sessionId });
    return turn.result(final, this.state.turnsCompleted);
  }

  /** The cancelled turn this turn's begin marks, taken from the state once. */
  private cancelledBefore(): { cancelledTurn?: NonNullable<SessionCarriedState['cancelledTurn']> } {
    const cancelled = this.state.takeCancelledTurn();
    return cancelled ? { cancelledTurn: cancelled } : {};
  }

  /** A send that named an entry the session has moved past is refused before anything is written. */
  private refuseStale(request: TurnRequest): void {
    if (request.expectedLastEntryId === undefined || !this.state.isStale(request.expectedLastEntryId)) return;
    throw wf.ApplicationFailure.nonRetryable(
      `expectedLastEntryId ${request.expectedLastEntryId} is stale: the session's last entry is ${this.state.lastEntryId}; reload and resend`,
      FailureTypes.StaleTurn,
    );
  }

  /** The result of a turn that sent nothing to the model (silent when there is nothing to say). */
  private unanswered(reply: string): TurnResult {
    return {
      reply,
      silent: reply === '',
      userEntryId: '',
      assistantEntryId: '',
      turn: this.state.turnsCompleted,
      usage: NO_USAGE,
      modelCalls: 0,
    };
  }

  /**
   * The turn's begin and first model call in one activity. The call is absent when the begin left the
   * workflow something to do first. A prompt the model refused as too long is handed on as the call's
   * error, with the begin's result its failure carries, for the compaction that answers it.
   */
  private async startTurn(
    request: TurnRequest,
    turn: TurnProgress,
  ): Promise<{ begin: BeginTurnResult; first?: FirstCall }> {
    const beginInput: BeginTurnInput = this.ctx.withIds({
      turn: turn.turn,
      userEntryId: turn.userEntryId,
      text: request.text,
      now: now(),
      newSessionId: wf.uuid4(),
      ...(request.event ? { event: request.event } : {}),
      ...(request.announce ? { announce: request.announce } : {}),
      ...(request.subagentTask ? { subagentTask: true } : {}),
      ...(this.input.task ? { task: this.input.task } : {}),
      ...(request.budget ? { budget: request.budget } : {}),
      ...this.cancelledBefore(),
    });
    const call = {
      assistantEntryId: wf.uuid4(),
      finish: turn.finish,
      ...(turn.thinking ? { thinking: turn.thinking } : {}),
      ...(turn.streamTo !== undefined ? { requestId: turn.streamTo } : {}),
    };
    try {
      const started = await this.model.startTurn({ ...beginInput, call });
      if (started.kind === 'begun') return { begin: started.begun };
      const { begun, ...outcome } = started;
      return { begin: begun, first: { outcome } };
    } catch (err) {
      if (!isOverflow(err)) throw err;
      // A history recorded before the overflow carried the begin's result reads the begin again.
      return { begin: begunOf(err) ?? (await localActivities.beginTurn(beginInput)), first: { error: err } };
    }
  }

  /**
   * Model calls, each followed by the tool calls it asked for, until a reply asks for none. Before
   * each call after the first: a run past its round bound hands itself on (continue-as-new), and a
   * run at its budget makes its last call, without tools, to report where it stands.
   */
  private async modelAndToolCalls(
    sessionId: string,
    turn: TurnProgress,
    timing: TurnTiming,
    first: FirstCall | undefined,
    resumed?: ResumedCalls,
  ): Promise<CallModelResult> {
    let made = first;
    let resuming = resumed;
    for (;;) {
      let reply: CallModelResult;
      if (resuming) reply = resuming.reply;
      else {
        if (!made) {
          this.handOnWhenDue(turn);
          timing.step('model');
          const limit = turn.budgetReached();
          if (limit) turn.stopAt(limit);
        }
        reply = await this.callModelWithRecovery(sessionId, turn, made);
        made = undefined;
        turn.replied(reply);
        this.roundsThisRun++;
        this.state.turnRunning(turn);
        // A reply without tool calls ends the turn; so does the report at the budget, whatever it asked.
        if (reply.toolCalls.length === 0 || turn.stopReason) return reply;
      }
      timing.step('tools');
      for (let i = resuming?.callIndex ?? 0; i < reply.toolCalls.length; i++) {
        const call = reply.toolCalls[i]!;
        const waiting = resuming?.callIndex === i ? resuming.approval : undefined;
        try {
          turn.toolAnswered(call, await this.toolCall(sessionId, turn, reply.entryId, call, waiting));
        } catch (err) {
          if (err instanceof TurnSuspended) err.inReply({ reply: withoutKind(reply), callIndex: i });
          throw err;
        }
      }
      resuming = undefined;
    }
  }

  /**
   * Between two rounds: a run that has made its share of model calls, or that Temporal asks to
   * continue as new, hands the turn on to the next run, so history per run stays bounded whatever
   * the number of rounds.
   */
  private handOnWhenDue(turn: TurnProgress): void {
    if (!this.ctx.mayHandOn()) return;
    const due = this.roundsThisRun >= (this.input.tuning?.maxRoundsPerRun ?? DEFAULTS.maxRoundsPerRun);
    if (due || this.ctx.mustHandOn()) throw TurnSuspended.beforeRound(turn.modelCalls + 1);
  }

  /** One tool call of a reply; `sessions_spawn` is the workflow's own. Returns its result entry. */
  private async toolCall(
    sessionId: string,
    turn: TurnProgress,
    assistantEntryId: string,
    call: { readonly id: string; readonly name: string; readonly approval?: ToolCallApproval },
    waiting?: PendingApproval,
  ): Promise<RunToolResult> {
    if (call.name === SESSIONS_SPAWN_TOOL) return this.spawn(sessionId, assistantEntryId, call.id, turn.parentId);
    // A call that waits for a person (or already waited in the last run): a denied one is answered without running.
    if (call.approval) {
      const ref = this.ctx.withIds({ sessionId, assistantEntryId, toolCallId: call.id });
      const pending = waiting ?? (await this.approvalSteps.open(ref, call.name, call.approval));
      const denied = await this.approvalSteps.wait(ref, turn, pending);
      if (denied) return denied;
    }
    return this.runTool(
      this.ctx.withIds({
        turn: turn.turn,
        sessionId,
        assistantEntryId,
        toolCallId: call.id,
        resultEntryId: wf.uuid4(),
        parentId: turn.parentId,
        idempotencyKey: `${wf.workflowInfo().workflowId}/${assistantEntryId}/${call.id}`,
        now: now(),
        ...(turn.streamTo !== undefined ? { requestId: turn.streamTo } : {}),
      }),
    );
  }

  /** A turn that ran out of model calls with tool calls pending: its usage is added to the session apart. */
  private async finishWithoutReply(turn: TurnProgress, final: CallModelResult): Promise<FinishTurnResult> {
    const window = final.contextWindow !== undefined ? { contextWindow: final.contextWindow } : {};
    return localActivities.finishTurn(
      this.ctx.withIds({
        usage: turn.usage,
        contextTokens: final.contextTokens,
        ...window,
        now: now(),
        touch: turn.touch,
      }),
    );
  }

  /**
   * One tool call; returns its result entry. A tool's own failures come back as error results; an
   * activity that failed for good (its worker lost on every attempt) is answered with one too, so the
   * model reads that it may have run (never the infrastructure's error) and the transcript stays paired.
   */
  private async runTool(input: RunToolInput): Promise<RunToolResult> {
    try {
      return await this.tools.runTool(input);
    } catch (err) {
      if (!(err instanceof wf.ActivityFailure) || wf.isCancellation(err)) throw err;
      wf.log.warn('tool activity failed for good; its call is answered with an error', {
        toolCallId: input.toolCallId,
        error: describeFailure(err),
      });
      return await localActivities.storeToolFailure({ ...input, error: toolFailureText(err) });
    }
  }

  /**
   * `sessions_spawn`: checked and recorded by an activity, then the subagent's session runs as a child
   * workflow with its task as the first request. ABANDON: the child outlives this run's
   * continue-as-new and idle close; it announces to this session's workflow id, whichever run holds it.
   * Returns the tool result entry (the spawn's receipt, or why it was refused: an error result).
   */
  private async spawn(
    sessionId: string,
    assistantEntryId: string,
    toolCallId: string,
    parentId: string,
  ): Promise<RunToolResult> {
    const ref = this.ctx.withIds({
      sessionId,
      assistantEntryId,
      toolCallId,
      resultEntryId: wf.uuid4(),
      parentId,
      now: now(),
      subagentId: wf.uuid4(),
    });
    const prepared = await localActivities.prepareSpawn(ref);
    if (prepared.kind === 'refused') return { entryId: prepared.entryId, isError: true };
    const workflowId = sessionWorkflowId(prepared.childAgentId, prepared.childSessionKey);
    const childInput: SessionWorkflowInput = {
      agentId: prepared.childAgentId,
      sessionKey: prepared.childSessionKey,
      ...(this.input.tuning ? { tuning: this.input.tuning } : {}),
      firstRequest: {
        requestId: `task:${ref.subagentId}`,
        turn: { text: 'subagent task', subagentTask: true, ...(prepared.budget ? { budget: prepared.budget } : {}) },
      },
    };
    try {
      await wf.startChild(subagentWorkflowType(), {
        workflowId,
        args: [childInput],
        parentClosePolicy: wf.ParentClosePolicy.ABANDON,
        memo: { parentSessionKey: this.input.sessionKey, ...(prepared.label ? { label: prepared.label } : {}) },
        typedSearchAttributes: [
          { key: KeelAgentId, value: prepared.childAgentId },
          { key: KeelSessionKey, value: prepared.childSessionKey },
          { key: KeelParentSessionKey, value: this.input.sessionKey },
        ],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    const recorded = await localActivities.recordSpawn({ ...ref, workflowId });
    return { entryId: recorded.entryId, isError: false };
  }

  /**
   * A model call. An overflow, or a pre-call check that finds the context over its budget, is
   * answered by compacting and calling again, as often as the turn needs, while each compaction
   * reclaims. After a compaction that freed nothing the call is made once more (the window may still
   * hold it, or the overflow taught a window that sizes it down); a second overflow after one fails
   * the turn, naming what does not fit.
   */
  private async callModelWithRecovery(
    sessionId: string,
    turn: TurnProgress,
    first: FirstCall | undefined,
  ): Promise<CallModelResult> {
    let made = first;
    let precheck = true;
    // The last overflow's compaction freed nothing: the window it taught may still make the next call fit, once.
    let freedNothing = false;
    for (;;) {
      let r: ModelCallOutcome;
      try {
        // The first call was made by startTurn: its answer (or failure) goes through the same recovery.
        r = made ? takeFirstCall(made) : await this.model.callModel(this.callInput(sessionId, turn, precheck));
      } catch (err) {
        if (!isOverflow(err)) throw err;
        turn.compactedOnce();
        const result = await this.jobs.compact(sessionId, 'overflow', {}, turn);
        if (!reclaimed(result) && freedNothing) throw overflowAfterCompaction(result, err);
        freedNothing = !reclaimed(result);
        // A check now would only ask for the compaction that just freed nothing.
        precheck = !freedNothing;
        continue;
      } finally {
        made = undefined;
      }
      if (r.kind === 'reply') return r;
      turn.compactedOnce();
      // The provider compacted and paused; the activity recorded it. Call again from its summary.
      if (r.kind === 'compacted') this.state.recordCompaction(r.compaction);
      // The pre-call check: the context no longer fits; compact and continue the same turn.
      else precheck = reclaimed(await this.jobs.compact(sessionId, 'threshold', {}, turn));
      this.state.turnRunning(turn);
    }
  }

  /** A model call of the turn after its first. */
  private callInput(sessionId: string, turn: TurnProgress, precheck: boolean): CallModelInput {
    return this.ctx.withIds({
      turn: turn.turn,
      sessionId,
      assistantEntryId: wf.uuid4(),
      parentId: turn.parentId,
      now: now(),
      precheck,
      finish: turn.finish,
      ...(turn.stopReason ? { lastCall: turn.stopReason } : {}),
      ...(turn.thinking ? { thinking: turn.thinking } : {}),
      ...(turn.streamTo !== undefined ? { requestId: turn.streamTo } : {}),
      ...(this.input.task ? { task: this.input.task } : {}),
    });
  }
}

/** A resumed turn's reply, and the call of it that waits for approval (the calls before it were answered). */
interface ResumedCalls {
  readonly reply: CallModelResult;
  readonly callIndex: number;
  readonly approval: PendingApproval;
}

/** A reply as continue-as-new hands it on. */
function withoutKind(reply: CallModelResult): SuspendedAtApproval['reply'] {
  const { kind: _kind, finished: _finished, ...rest } = reply;
  return rest;
}

/**
 * A compaction made the context smaller. Absent: another compaction of this session was running and
 * covers this one (the next call's check tells).
 */
function reclaimed(result: CompactionWorkflowResult | undefined): boolean {
  return !result || (result.status === 'succeeded' && result.tokensAfter < result.tokensBefore);
}

/** The model refused the prompt as too long after a compaction that freed nothing: the figures, and what to change. */
function overflowAfterCompaction(result: CompactionWorkflowResult | undefined, overflow: Error): wf.ApplicationFailure {
  const figures = result
    ? ` (the conversation was ${result.tokensBefore} tokens before, ${result.tokensAfter} after)`
    : '';
  return wf.ApplicationFailure.nonRetryable(
    `the model rejected the prompt as too long (${describeFailure(overflow)}), and compacting freed nothing${figures}: what is left is the turn's latest round (a model reply and its tool results), the system prompt, workspace files and tools, which do not fit the window. The user message is stored, nothing was lost. Shorten the tool's output or raise the window (KEEL_CONTEXT_WINDOW, contextTokens).`,
    FailureTypes.ContextOverflowAfterCompaction,
  );
}

/** The first call's outcome, or its failure thrown again. */
function takeFirstCall(first: FirstCall): ModelCallOutcome {
  if ('error' in first) throw first.error;
  return first.outcome;
}

/** The workflow type a spawned subagent starts as (its own, unless the history started them as sessions). */
function subagentWorkflowType(): string {
  return wf.patched(SUBAGENT_OWN_WORKFLOW_TYPE) ? SUBAGENT_WORKFLOW_TYPE : SESSION_WORKFLOW_TYPE;
}

/** Cancels another workflow; one already closed is fine. */
async function cancelQuietly(workflowId: string): Promise<void> {
  try {
    await wf.getExternalWorkflowHandle(workflowId).cancel();
  } catch (err) {
    if (!(err instanceof wf.TemporalFailure) && !(err instanceof Error && /not found/i.test(err.message))) throw err;
    wf.log.info('subagent of a reset session was already gone', { workflowId });
  }
}

/** The model rejected the prompt as too long (ActivityFailure caused by a ContextOverflow ApplicationFailure). */
function isOverflow(err: unknown): err is wf.ActivityFailure {
  return (
    err instanceof wf.ActivityFailure &&
    err.cause instanceof wf.ApplicationFailure &&
    err.cause.type === FailureTypes.ContextOverflow
  );
}

/**
 * The begin's result an overflow of the turn's first call carries (its failure's last detail);
 * undefined in a history recorded before it did (0.1.0), which reads the begin again with `beginTurn`.
 */
function begunOf(overflow: wf.ActivityFailure): BeginTurnResult | undefined {
  const details = overflow.cause instanceof wf.ApplicationFailure ? overflow.cause.details : undefined;
  const last = details?.at(-1) as Partial<OverflowBegun> | undefined;
  return last?.begun;
}
