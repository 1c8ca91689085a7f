import { randomUUID } from 'node:crypto';
import {
  ApplicationFailure,
  Client,
  WithStartWorkflowOperation,
  isGrpcServiceError,
  WorkflowUpdateFailedError,
  type Connection,
  type DataConverter,
} from '@temporalio/client';
import { isAdmissionRejected, retryAdmission } from './retry-admission';
import { isClosedWorkflow } from './closed-workflow';
import { AdmissionLine, type PlaceInLine } from './admission-line';
import { listenForReply } from './reply-listener';
import type { ReplyStreamEvent } from '../streaming/reply-assembler';
import type { ReplyStreamSubscriber } from '../streaming/reply-subscriber';
import { sessionWorkflowId, sessionWorkflowType, parseSessionKey } from '../sessions/session-key';
import { agentNotAllowed } from '../security/allowed-agents';
import {
  KeelRequestError,
  checkCompactRequest,
  checkRequestSize,
  checkTurnRequest,
} from '../sessions/validate-request';
import {
  DEFAULT_TASK_QUEUE,
  FailureTypes,
  awaitResultUpdate,
  cancelRequestSignal,
  decideApprovalUpdate,
  enqueueSignal,
  type ApprovalDecision,
  type ApprovalOutcome,
  type CompactRequest,
  type CompactionWorkflowResult,
  type RequestOutcome,
  type SessionRequest,
  statusQuery,
  type SessionStatus,
  type SessionTuning,
  type SessionWorkflowInput,
  type RunBudget,
  type TurnRequest,
  type TurnResult,
} from '../protocol';
import type { ThinkingLevel } from '../turn/thinking-level';

export interface KeelClientOptions {
  readonly connection: Connection;
  readonly namespace?: string | undefined;
  /** The workers' data converter: `keelDataConverter(keyRingFor(config))` when payloads are encrypted. */
  readonly dataConverter?: DataConverter | undefined;
  readonly taskQueue?: string | undefined;
  /** The agent that owns sessions whose key does not name one (cron:/hook: keys). Default `main`. */
  readonly defaultAgentId?: string | undefined;
  /** The agents this client may address (KEEL_ALLOWED_AGENTS); another is refused before anything is sent. Unset → all. */
  readonly allowedAgents?: readonly string[] | undefined;
  readonly contextWindowTokens?: number | undefined;
  /** Activity timeouts for sessions this client starts (tests shorten them). */
  readonly tuning?: SessionTuning | undefined;
  /** How long a send waits for its outcome (queued behind other turns included). Default 24 hours. */
  readonly waitMs?: number | undefined;
  /**
   * Where streamed reply text is heard (`PgReplyStreamSubscriber` on the workers' database). Without
   * it `onText` is never called and sends work as before, returning the whole reply.
   */
  readonly stream?: ReplyStreamSubscriber | undefined;
  /** Where the client reports that streaming failed (default: stderr). */
  readonly warn?: ((line: string) => void) | undefined;
}

export interface SendMessageOptions {
  /** Idempotency: a resent request with the same id runs once and returns the same outcome. */
  readonly requestId?: string | undefined;
  /** Reject the send if the session has moved past this entry. */
  readonly expectedLastEntryId?: string | undefined;
  /** A system event (heartbeat, cron, exec notice) runs a turn without refreshing freshness. */
  readonly event?: TurnRequest['event'] | undefined;
  /** Called once the session has admitted the message: its place in the session's order is fixed. */
  readonly onAdmitted?: (() => void) | undefined;
  /**
   * The reply's text as the model writes it (needs the client's `stream`): each delta and all text so
   * far, model calls of a tool loop in order. Best effort; the returned reply is the durable one.
   * A reply that starts with NO_REPLY streams nothing.
   */
  readonly onText?: ((delta: string, soFar: string) => void) | undefined;
  /** A model call was retried: replace what was shown with `soFar` (its new attempt streams next). */
  readonly onRestart?: ((soFar: string) => void) | undefined;
  /**
   * This turn's run budget (model calls, tokens; `null` is no limit) over the agent's. At its budget
   * the turn makes one last call without tools to report, and its result carries `stopReason`.
   */
  readonly budget?: RunBudget | undefined;
  /** This turn's thinking level, over the session's (`/think`) and its agent's (`thinkingLevel`). */
  readonly thinking?: ThinkingLevel | undefined;
}

/** What `streamMessage` yields: reply text, restarts and tool calls as they happen, then the durable reply. */
export type ReplyStreamItem = ReplyStreamEvent | { readonly type: 'reply'; readonly result: TurnResult };

export interface CompactOptions {
  /** Idempotency: a resent compaction with the same id runs once. */
  readonly requestId?: string | undefined;
}

/**
 * The application's handle on Keel: send a message to a session and get the reply after a durable
 * turn; compact; read a session's status. Starts the session workflow on first use.
 *
 * A client's sends to one session are admitted one after another, in the order they were made (see
 * `AdmissionLine`). A send with nothing of this client ahead of it admits itself and collects its
 * outcome in one Update-with-Start; a send behind others is admitted by Signal-with-Start (no
 * in-flight limit, so a burst is never refused) and collects its outcome with the `awaitResult`
 * Update. Both carry the request id, so a retried call never runs a turn twice. A failed request
 * throws an `ApplicationFailure` whose `type` is one of `FailureTypes`.
 */
export class KeelClient {
  readonly temporal: Client;
  private readonly taskQueue: string;
  private readonly warn: (line: string) => void;
  /** This client's sends per session, admitted in the order they were made. */
  private readonly line = new AdmissionLine();
  /** Sends still waiting in this client's line (not sent to the session yet), by request id: a cancel withdraws them here. */
  private readonly inLine = new Map<string, () => void>();
  /** Whether the stream's `cannotHear` was asked (once per client: the warning is said once). */
  private streamChecked = false;

  constructor(private readonly opts: KeelClientOptions) {
    this.temporal = new Client({
      connection: opts.connection,
      namespace: opts.namespace ?? 'default',
      ...(opts.dataConverter ? { dataConverter: opts.dataConverter } : {}),
    });
    this.taskQueue = opts.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.warn = opts.warn ?? ((line) => void process.stderr.write(`${line}\n`));
  }

  /**
   * Which agent owns a session key, and the session workflow's id. Throws InvalidSessionKeyError, or
   * KeelRequestError when the agent is not in `allowedAgents`.
   */
  identify(sessionKey: string): { agentId: string; workflowId: string } {
    const parsed = parseSessionKey(sessionKey);
    const agentId = parsed.agentId ?? this.opts.defaultAgentId ?? 'main';
    const refusal = agentNotAllowed(this.opts.allowedAgents, agentId);
    if (refusal) throw new KeelRequestError({ field: 'KEEL_ALLOWED_AGENTS', message: refusal });
    return { agentId, workflowId: sessionWorkflowId(agentId, sessionKey) };
  }

  /** Runs one durable turn and returns the assistant's reply; `onText` hears it as it streams. */
  async sendMessage(sessionKey: string, text: string, opts: SendMessageOptions = {}): Promise<TurnResult> {
    const { onText, onRestart } = opts;
    return this.runTurn(sessionKey, text, opts, (event) => {
      if (event.type === 'text') onText?.(event.delta, event.soFar);
      else if (event.type === 'restart') onRestart?.(event.soFar);
    });
  }

  /**
   * `sendMessage` as an async iterator: the streamed events, then `{ type: 'reply', result }`.
   *
   * @example
   *   for await (const item of client.streamMessage(key, 'hello')) {
   *     if (item.type === 'text') process.stdout.write(item.delta);
   *   }
   */
  async *streamMessage(
    sessionKey: string,
    text: string,
    opts: Omit<SendMessageOptions, 'onText' | 'onRestart'> = {},
  ): AsyncGenerator<ReplyStreamItem> {
    const queue: ReplyStreamItem[] = [];
    let wake: (() => void) | undefined;
    let failure: { error: unknown } | undefined;
    let finished = false;
    const push = (item: ReplyStreamItem) => {
      queue.push(item);
      wake?.();
    };
    const sending = this.runTurn(sessionKey, text, opts, push).then(
      (result) => push({ type: 'reply', result }),
      (error: unknown) => {
        failure = { error };
      },
    );
    const settled = sending.finally(() => {
      finished = true;
      wake?.();
    });
    for (;;) {
      const item = queue.shift();
      if (item) {
        yield item;
        if (item.type === 'reply') break;
        continue;
      }
      if (failure) throw failure.error;
      if (finished) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
    await settled;
  }

  private async runTurn(
    sessionKey: string,
    text: string,
    opts: SendMessageOptions,
    onEvent: (event: ReplyStreamEvent) => void,
  ): Promise<TurnResult> {
    const turn: TurnRequest = {
      text,
      ...(opts.expectedLastEntryId ? { expectedLastEntryId: opts.expectedLastEntryId } : {}),
      ...(opts.event ? { event: opts.event } : {}),
      ...(opts.budget ? { budget: opts.budget } : {}),
      ...(opts.thinking ? { thinking: opts.thinking } : {}),
      // Nobody hears this reply stream: the worker need not publish it.
      ...(this.opts.stream ? {} : { streamReply: false }),
    };
    const problem = checkTurnRequest(turn);
    if (problem) throw new KeelRequestError(problem);
    const requestId = opts.requestId ?? randomUUID();
    const { agentId, workflowId } = this.identify(sessionKey);
    // The place in line is taken at the call, before anything awaits: it fixes the send's order.
    const place = this.line.join(workflowId);
    let listener: Awaited<ReturnType<typeof listenForReply>> | undefined;
    try {
      if (this.opts.stream && !this.streamChecked) {
        this.streamChecked = true;
        const deaf = await this.opts.stream.cannotHear?.();
        if (deaf) this.warn(deaf);
      }
      // Listening starts before the request is admitted, so no chunk is sent before anyone hears it.
      listener = this.opts.stream
        ? await listenForReply(this.opts.stream, { agentId, sessionKey, requestId }, onEvent, this.warn)
        : undefined;
      const outcome = await this.submit(sessionKey, { requestId, turn }, place, opts.onAdmitted);
      if (!('turn' in outcome)) throw new Error('keel: a turn request was answered with a compaction result');
      if (listener && outcome.turn.modelCalls > 0) await listener.settle(outcome.turn.assistantEntryId);
      return outcome.turn;
    } finally {
      place.leave();
      await listener?.stop();
    }
  }

  /**
   * Compacts a session now, between its turns (a manual compaction: a hard checkpoint unless
   * `keepRecentTokens` is given), and returns the compaction's result.
   */
  async compact(
    sessionKey: string,
    request: CompactRequest = {},
    opts: CompactOptions = {},
  ): Promise<CompactionWorkflowResult> {
    const problem = checkCompactRequest(request);
    if (problem) throw new KeelRequestError(problem);
    const place = this.line.join(this.identify(sessionKey).workflowId);
    try {
      const outcome = await this.submit(
        sessionKey,
        { requestId: opts.requestId ?? randomUUID(), compact: request },
        place,
      );
      if (!('compaction' in outcome)) throw new Error('keel: a compaction request was answered with a turn result');
      return outcome.compaction;
    } finally {
      place.leave();
    }
  }

  /** Admits the request when its place in line comes, then waits for its outcome across continue-as-new. */
  private async submit(
    sessionKey: string,
    request: SessionRequest,
    place: PlaceInLine,
    onAdmitted?: () => void,
  ): Promise<Extract<RequestOutcome, { status: 'done' }>> {
    const { agentId, workflowId } = this.identify(sessionKey);
    const sizeProblem = checkRequestSize(Buffer.byteLength(JSON.stringify(request)));
    if (sizeProblem) throw new KeelRequestError(sizeProblem);
    const input: SessionWorkflowInput = {
      agentId,
      sessionKey,
      ...(this.opts.contextWindowTokens ? { contextWindowTokens: this.opts.contextWindowTokens } : {}),
      ...(this.opts.tuning ? { tuning: this.opts.tuning } : {}),
    };
    const sub: Submission = {
      sessionKey,
      request,
      start: { workflowId, taskQueue: this.taskQueue, args: [input] },
      deadline: Date.now() + (this.opts.waitMs ?? 24 * 60 * 60_000),
    };
    const oneTrip = onAdmitted === undefined;
    await this.waitInLine(request.requestId, place);
    // Alone in line, the send admits itself by Update; behind others, by Signal (no in-flight limit).
    const byUpdate = place.alone ? await this.admitByUpdate(sub, oneTrip) : undefined;
    if (!byUpdate) await this.admitBySignal(sub);
    // In one trip the outcome came with the admission; `unknown` there means nothing was admitted
    // (the run closed first, or a worker of an older Keel ignored the carried request).
    let outcome = byUpdate && oneTrip ? await byUpdate.result().catch(closedAsUnknown) : undefined;
    if (outcome?.status === 'unknown') {
      await this.admitBySignal(sub);
      outcome = undefined;
    }
    place.admitted();
    onAdmitted?.();
    if (byUpdate && !oneTrip) {
      outcome = await byUpdate.result().catch(closedAsUnknown);
      // A worker of an older Keel ignores the carried request and answers `unknown`: admit it as it expects.
      if (outcome.status === 'unknown') await this.admitBySignal(sub);
    }
    if (outcome?.status === 'done') return outcome;
    if (outcome?.status === 'failed') throw requestFailure(outcome);
    await place.earlierOver;
    return await this.waitForOutcome(sub);
  }

  /** Waits for the send's turn in this client's line; a cancel meanwhile withdraws it before it is sent. */
  private async waitInLine(requestId: string, place: PlaceInLine): Promise<void> {
    const withdrawn = new Promise<never>((_, reject) =>
      this.inLine.set(requestId, () => reject(requestFailure(CANCELLED_IN_LINE))),
    );
    try {
      await Promise.race([place.ready, withdrawn]);
    } finally {
      this.inLine.delete(requestId);
    }
  }

  /**
   * The common case: an Update-with-Start that carries the request. When nobody waits to hear of the
   * admission (`oneTrip`), one round trip: the server answers with the outcome. Otherwise it returns
   * once the session accepted the request, and the outcome is asked for after. Undefined when refused
   * for now (the in-flight limit reached, or the run moved on first): the caller admits by Signal.
   */
  private async admitByUpdate(
    sub: Submission,
    oneTrip: boolean,
  ): Promise<{ result(): Promise<RequestOutcome> } | undefined> {
    const options = {
      args: [{ requestId: sub.request.requestId, request: sub.request }] as [
        { requestId: string; request: SessionRequest },
      ],
      updateId: randomUUID(),
      startWorkflowOperation: new WithStartWorkflowOperation(sessionWorkflowType(sub.sessionKey), {
        ...sub.start,
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    };
    try {
      if (!oneTrip)
        return await this.temporal.workflow.startUpdateWithStart(awaitResultUpdate, {
          ...options,
          waitForStage: 'ACCEPTED',
        });
      const outcome = await this.temporal.workflow.executeUpdateWithStart(awaitResultUpdate, options);
      return { result: async () => outcome };
    } catch (err) {
      if (isAdmissionRejected(err) || isUpdateWithStartRefused(err)) return undefined;
      // Accepted, then the run closed before answering: as the two-step path sees it, an unknown outcome.
      if (oneTrip && isClosedWorkflow(err)) return { result: async () => ({ status: 'unknown' }) };
      throw err;
    }
  }

  /** Signal-with-Start: admitted in arrival order, with no in-flight limit. */
  private async admitBySignal(sub: Submission): Promise<void> {
    await retryAdmission(() =>
      this.temporal.workflow.signalWithStart(sessionWorkflowType(sub.sessionKey), {
        ...sub.start,
        signal: enqueueSignal,
        signalArgs: [sub.request],
      }),
    );
  }

  /** Asks for an admitted request's outcome until there is one, following the session across runs. */
  private async waitForOutcome(sub: Submission): Promise<Extract<RequestOutcome, { status: 'done' }>> {
    const { request, sessionKey, deadline } = sub;
    const handle = this.temporal.workflow.getHandle(sub.start.workflowId);
    for (let readmitted = false; ;) {
      // Many senders may wait on one session; beyond Temporal's in-flight Update limit an ask is
      // refused for now and asked again, which never reorders the turns (admission already did that).
      const outcome = await retryAdmission(
        () =>
          handle.executeUpdate(awaitResultUpdate, { args: [{ requestId: request.requestId }], updateId: randomUUID() }),
        { deadlineMs: Math.max(0, deadline - Date.now()), maxDelayMs: 3_000 },
      ).catch(closedAsUnknown);
      if (outcome.status === 'done') return outcome;
      if (outcome.status === 'failed') throw requestFailure(outcome);
      if (Date.now() > deadline)
        throw ApplicationFailure.create({
          message: `no outcome for request ${request.requestId} after ${this.opts.waitMs ?? 86_400_000} ms`,
          type: FailureTypes.TurnFailed,
          nonRetryable: true,
        });
      if (outcome.status === 'unknown') {
        // The session closed idle before this request reached it, or forgot it: admit it once more
        // under the same id (a session that ran it answers from its remembered ids, never twice).
        if (readmitted)
          throw ApplicationFailure.create({
            message: `session ${sessionKey} does not know request ${request.requestId}`,
            type: FailureTypes.TurnFailed,
            nonRetryable: true,
          });
        readmitted = true;
        await this.admitBySignal(sub);
        continue;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The session workflow's view of context usage and compactions. */
  async getStatus(sessionKey: string): Promise<SessionStatus> {
    const { workflowId } = this.identify(sessionKey);
    return this.temporal.workflow.getHandle(workflowId).query(statusQuery);
  }

  /**
   * Approves a tool call the session's running turn waits on (an id from `status.pendingApprovals` or
   * `keel approvals`): the call runs once. A call already decided returns its first outcome; a call
   * the session no longer waits for fails with `FailureTypes.UnknownApproval` (its stored row says
   * how it ended).
   */
  async approve(
    sessionKey: string,
    approvalId: string,
    opts: { readonly by?: string; readonly note?: string } = {},
  ): Promise<ApprovalOutcome> {
    return this.decideApproval(sessionKey, { approvalId, decision: 'approve', ...opts });
  }

  /** Denies a waiting tool call: it never runs, and the model reads the decision, who took it and `reason`. See `approve`. */
  async deny(
    sessionKey: string,
    approvalId: string,
    opts: { readonly by?: string; readonly reason?: string } = {},
  ): Promise<ApprovalOutcome> {
    return this.decideApproval(sessionKey, { approvalId, decision: 'deny', ...opts });
  }

  private async decideApproval(sessionKey: string, decision: ApprovalDecision): Promise<ApprovalOutcome> {
    const { workflowId } = this.identify(sessionKey);
    try {
      return await this.temporal.workflow
        .getHandle(workflowId)
        .executeUpdate(decideApprovalUpdate, { args: [decision], updateId: randomUUID() });
    } catch (err) {
      // The workflow's refusal (an unknown approval, a bad decision) is the caller's to read, with its type.
      if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) throw err.cause;
      if (!isClosedWorkflow(err)) throw err;
      throw ApplicationFailure.nonRetryable(
        `session ${sessionKey} is not running: no tool call of it waits for approval ${decision.approvalId}`,
        FailureTypes.UnknownApproval,
      );
    }
  }

  /**
   * Asks the session to cancel a turn this client sent (pass the send's `requestId`): a turn still
   * waiting in this client's line is withdrawn before it is sent, a queued turn is withdrawn, a running
   * one stops, and its sender's call fails with `FailureTypes.Cancelled`.
   * A request that already finished, a compaction, or a session that is not running: nothing happens.
   */
  async cancelRequest(sessionKey: string, requestId: string): Promise<void> {
    // Still waiting in this client's line: the session never hears of it.
    const waiting = this.inLine.get(requestId);
    if (waiting) return waiting();
    const { workflowId } = this.identify(sessionKey);
    try {
      await this.temporal.workflow.getHandle(workflowId).signal(cancelRequestSignal, { requestId });
    } catch (err) {
      if (!isClosedWorkflow(err)) throw err;
    }
  }

  /**
   * The outcome of a request that has settled (an id from `status.uncollectedRequestIds`), which
   * marks it collected. A chat shows replies nobody asked for this way, e.g. to a subagent's announce.
   */
  async collectOutcome(sessionKey: string, requestId: string): Promise<RequestOutcome> {
    const { workflowId } = this.identify(sessionKey);
    return this.temporal.workflow
      .getHandle(workflowId)
      .executeUpdate(awaitResultUpdate, { args: [{ requestId }], updateId: randomUUID() })
      .catch(closedAsUnknown);
  }

  /**
   * The session's step that is failing and being retried now, or undefined. Temporal records a
   * retrying activity's last failure on the workflow (its pending activity), so nothing is added to
   * the workflow to know it: a chat polls this while a turn runs and says at once why it waits
   * (`model unreachable at http://127.0.0.1:9 (ANTHROPIC_BASE_URL): fetch failed …`), where the
   * turn itself would only fail once the retry budget is spent.
   */
  async retryingStep(sessionKey: string): Promise<RetryingStep | undefined> {
    const { workflowId } = this.identify(sessionKey);
    let described;
    try {
      described = await this.temporal.workflow.getHandle(workflowId).describe();
    } catch (err) {
      if (isClosedWorkflow(err)) return undefined;
      throw err;
    }
    for (const pending of described.raw.pendingActivities ?? []) {
      const message = pending.lastFailure?.message;
      if (message && (pending.attempt ?? 0) > 1) {
        const nextAttemptAt = dateOf(pending.nextAttemptScheduleTime);
        const budgetEndsAt = dateOf(pending.expirationTime);
        return {
          activityType: pending.activityType?.name ?? 'activity',
          attempt: pending.attempt!,
          lastFailure: message,
          ...(nextAttemptAt ? { nextAttemptAt } : {}),
          ...(budgetEndsAt ? { budgetEndsAt } : {}),
          ...(pending.maximumAttempts ? { maximumAttempts: pending.maximumAttempts } : {}),
        };
      }
    }
    return undefined;
  }
}

/** A session step (an activity) that failed and waits for its next attempt. */
export interface RetryingStep {
  readonly activityType: string;
  /** The attempt that runs next (2 after the first failure). */
  readonly attempt: number;
  /** The last attempt's failure message. */
  readonly lastFailure: string;
  /** When the next attempt starts (absent while one runs). */
  readonly nextAttemptAt?: Date;
  /** When the step's retry budget (its schedule-to-close timeout) runs out, if it has one. */
  readonly budgetEndsAt?: Date;
  /** The step's attempt limit, if it has one. */
  readonly maximumAttempts?: number;
}

/** A protobuf timestamp as a Date; undefined when unset (seconds 0 is "unset" in Temporal's API). */
function dateOf(ts: { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined) {
  const seconds = typeof ts?.seconds === 'number' ? ts.seconds : (ts?.seconds?.toNumber() ?? 0);
  return seconds > 0 ? new Date(seconds * 1000 + Math.floor((ts?.nanos ?? 0) / 1e6)) : undefined;
}

/** A request on its way to a session: the workflow start it may need, and how long its sender waits. */
interface Submission {
  readonly sessionKey: string;
  readonly request: SessionRequest;
  readonly start: { readonly workflowId: string; readonly taskQueue: string; readonly args: [SessionWorkflowInput] };
  readonly deadline: number;
}

/** A closed workflow holds no outcome: ask as for an unknown request (the caller admits it again). */
function closedAsUnknown(err: unknown): { readonly status: 'unknown' } {
  if (isClosedWorkflow(err)) return { status: 'unknown' };
  throw err;
}

/** The request's own failure, as the sender sees it. */
/** The outcome of a send its client cancelled before it was sent, as the session words one it withdrew. */
const CANCELLED_IN_LINE: Extract<RequestOutcome, { status: 'failed' }> = {
  status: 'failed',
  type: FailureTypes.Cancelled,
  message: 'cancelled by its sender',
};

function requestFailure(outcome: Extract<RequestOutcome, { status: 'failed' }>): ApplicationFailure {
  return ApplicationFailure.create({ message: outcome.message, type: outcome.type, nonRetryable: true });
}

/**
 * The server refused the Update-with-Start as a whole (FAILED_PRECONDITION "Update-with-Start could
 * not be executed"), e.g. WorkflowNotReady when the worker keeps no workflow cache
 * (maxCachedWorkflows 0). Admitting by Signal instead is always safe: admission is idempotent by
 * request id, so a request the Update did reach is not queued twice.
 */
function isUpdateWithStartRefused(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && e.code === 9) return true;
  }
  return false;
}
