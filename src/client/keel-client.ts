import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Client, WithStartWorkflowOperation, isGrpcServiceError, type Connection, type DataConverter } from '@temporalio/client';
import { isAdmissionRejected, retryAdmission } from './retry-admission';
import { listenForReply } from './reply-listener';
import type { ReplyStreamEvent } from '../streaming/reply-assembler';
import type { ReplyStreamSubscriber } from '../streaming/reply-subscriber';
import { sessionWorkflowId, parseSessionKey } from '../sessions/session-key';
import { agentNotAllowed } from '../security/allowed-agents';
import { checkCompactRequest, checkRequestSize, checkTurnRequest, type RequestProblem } from '../sessions/validate-request';
import {
  DEFAULT_TASK_QUEUE,
  FailureTypes,
  awaitResultUpdate,
  enqueueSignal,
  type CompactRequest,
  type CompactionWorkflowResult,
  type RequestOutcome,
  type SessionRequest,
  statusQuery,
  type SessionStatus,
  type SessionTuning,
  type SessionWorkflowInput,
  type TurnRequest,
  type TurnResult,
} from '../protocol';

export interface KeelClientOptions {
  readonly connection: Connection;
  readonly namespace?: string;
  /** The workers' data converter: `keelDataConverter(keyRingFor(config))` when payloads are encrypted. */
  readonly dataConverter?: DataConverter;
  readonly taskQueue?: string;
  /** The agent that owns sessions whose key does not name one (cron:/hook: keys). Default `main`. */
  readonly defaultAgentId?: string;
  /** The agents this client may address (KEEL_ALLOWED_AGENTS); another is refused before anything is sent. Unset → all. */
  readonly allowedAgents?: readonly string[];
  readonly contextWindowTokens?: number;
  /** Activity timeouts for sessions this client starts (tests shorten them). */
  readonly tuning?: SessionTuning;
  /** How long a send waits for its outcome (queued behind other turns included). Default 24 hours. */
  readonly waitMs?: number;
  /**
   * Where streamed reply text is heard (`PgReplyStreamSubscriber` on the workers' database). Without
   * it `onText` is never called and sends work as before, returning the whole reply.
   */
  readonly stream?: ReplyStreamSubscriber;
  /** Where the client reports that streaming failed (default: stderr). */
  readonly warn?: (line: string) => void;
}

export interface SendMessageOptions {
  /** Idempotency: a resent request with the same id runs once and returns the same outcome. */
  readonly requestId?: string;
  /** Reject the send if the session has moved past this entry. */
  readonly expectedLastEntryId?: string;
  /** A system event (heartbeat, cron, exec notice) runs a turn without refreshing freshness. */
  readonly event?: TurnRequest['event'];
  /** Called once the session has admitted the message: its place in the session's order is fixed. */
  readonly onAdmitted?: () => void;
  /**
   * The reply's text as the model writes it (needs the client's `stream`): each delta and all text so
   * far, model calls of a tool loop in order. Best effort; the returned reply is the durable one.
   * A reply that starts with NO_REPLY streams nothing.
   */
  readonly onText?: (delta: string, soFar: string) => void;
  /** A model call was retried: replace what was shown with `soFar` (its new attempt streams next). */
  readonly onRestart?: (soFar: string) => void;
}

/** What `streamMessage` yields: reply text and restarts as they happen, then the durable reply. */
export type ReplyStreamItem = ReplyStreamEvent | { readonly type: 'reply'; readonly result: TurnResult };

export interface CompactOptions {
  /** Idempotency: a resent compaction with the same id runs once. */
  readonly requestId?: string;
}

/** A request Keel refused before sending anything: `field` names what to fix. */
export class KeelRequestError extends Error {
  override readonly name = 'KeelRequestError';
  readonly field: string;
  constructor(problem: RequestProblem) {
    super(problem.message);
    this.field = problem.field;
  }
}

/**
 * The application's handle on Keel: send a message to a session and get the reply after a durable
 * turn; compact; read a session's status. Starts the session workflow on first use.
 *
 * A request is admitted by Signal-with-start (arrival order, no in-flight limit, so a burst to one
 * session is never refused) and its outcome collected with the `awaitResult` Update; both carry the
 * request id, so a retried call never runs a turn twice. A failed request throws an
 * `ApplicationFailure` whose `type` is one of `FailureTypes`.
 */
/** Requests one client admits by Update per session before it switches to the Signal (Temporal's limit is 10). */
const UPDATE_ADMISSIONS_PER_SESSION = 5;

export class KeelClient {
  readonly temporal: Client;
  private readonly taskQueue: string;
  private readonly warn: (line: string) => void;
  /** Whether the stream's `cannotHear` was asked (once per client: the warning is said once). */
  private streamChecked = false;
  /** This client's requests per session workflow that are admitted by Update and not yet answered. */
  private readonly updatesInFlight = new Map<string, number>();

  constructor(private readonly opts: KeelClientOptions) {
    this.temporal = new Client({ connection: opts.connection, namespace: opts.namespace ?? 'default', ...(opts.dataConverter ? { dataConverter: opts.dataConverter } : {}) });
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
      else onRestart?.(event.soFar);
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
  async *streamMessage(sessionKey: string, text: string, opts: Omit<SendMessageOptions, 'onText' | 'onRestart'> = {}): AsyncGenerator<ReplyStreamItem> {
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

  private async runTurn(sessionKey: string, text: string, opts: SendMessageOptions, onEvent: (event: ReplyStreamEvent) => void): Promise<TurnResult> {
    const turn: TurnRequest = {
      text,
      ...(opts.expectedLastEntryId ? { expectedLastEntryId: opts.expectedLastEntryId } : {}),
      ...(opts.event ? { event: opts.event } : {}),
      // Nobody hears this reply stream: the worker need not publish it.
      ...(this.opts.stream ? {} : { streamReply: false }),
    };
    const problem = checkTurnRequest(turn);
    if (problem) throw new KeelRequestError(problem);
    const requestId = opts.requestId ?? randomUUID();
    if (this.opts.stream && !this.streamChecked) {
      this.streamChecked = true;
      const deaf = await this.opts.stream.cannotHear?.();
      if (deaf) this.warn(deaf);
    }
    // Listening starts before the request is admitted, so no chunk is sent before anyone hears it.
    const listener = this.opts.stream
      ? await listenForReply(this.opts.stream, { agentId: this.identify(sessionKey).agentId, sessionKey, requestId }, onEvent, this.warn)
      : undefined;
    try {
      const outcome = await this.submit(sessionKey, { requestId, turn }, opts.onAdmitted);
      if (!('turn' in outcome)) throw new Error('keel: a turn request was answered with a compaction result');
      if (listener && outcome.turn.modelCalls > 0) await listener.settle(outcome.turn.assistantEntryId);
      return outcome.turn;
    } finally {
      await listener?.stop();
    }
  }

  /**
   * Compacts a session now, between its turns (a manual compaction: a hard checkpoint unless
   * `keepRecentTokens` is given), and returns the compaction's result.
   */
  async compact(sessionKey: string, request: CompactRequest = {}, opts: CompactOptions = {}): Promise<CompactionWorkflowResult> {
    const problem = checkCompactRequest(request);
    if (problem) throw new KeelRequestError(problem);
    const outcome = await this.submit(sessionKey, { requestId: opts.requestId ?? randomUUID(), compact: request });
    if (!('compaction' in outcome)) throw new Error('keel: a compaction request was answered with a turn result');
    return outcome.compaction;
  }

  /** Admits the request, then waits for its outcome across continue-as-new. */
  private async submit(sessionKey: string, request: SessionRequest, onAdmitted?: () => void): Promise<Extract<RequestOutcome, { status: 'done' }>> {
    const { agentId, workflowId } = this.identify(sessionKey);
    const sizeProblem = checkRequestSize(Buffer.byteLength(JSON.stringify(request)));
    if (sizeProblem) throw new KeelRequestError(sizeProblem);
    const input: SessionWorkflowInput = {
      agentId,
      sessionKey,
      ...(this.opts.contextWindowTokens ? { contextWindowTokens: this.opts.contextWindowTokens } : {}),
      ...(this.opts.tuning ? { tuning: this.opts.tuning } : {}),
    };
    const sub: Submission = { sessionKey, request, start: { workflowId, taskQueue: this.taskQueue, args: [input] }, deadline: Date.now() + (this.opts.waitMs ?? 24 * 60 * 60_000) };
    const releaseSlot = this.claimUpdateSlot(workflowId);
    try {
      const first = releaseSlot ? await this.admitByUpdate(sub, onAdmitted === undefined) : undefined;
      if (!first) await this.admitBySignal(sub);
      onAdmitted?.();
      if (first) {
        const outcome = await first.result().catch(closedAsUnknown);
        if (outcome.status === 'done') return outcome;
        if (outcome.status === 'failed') throw requestFailure(outcome);
        // A worker of an older Keel ignores the carried request and answers `unknown`: admit it as it expects.
        if (outcome.status === 'unknown') await this.admitBySignal(sub);
      }
      return await this.waitForOutcome(sub);
    } finally {
      releaseSlot?.();
    }
  }

  /**
   * Temporal holds at most 10 in-flight Updates per workflow, and the SDK retries a refusal with
   * backoff. This client admits a few requests per session by Update; past those, a burst admits by
   * Signal at once (no limit). Returns the slot's release, or undefined when none is free.
   */
  private claimUpdateSlot(workflowId: string): (() => void) | undefined {
    const used = this.updatesInFlight.get(workflowId) ?? 0;
    if (used >= UPDATE_ADMISSIONS_PER_SESSION) return undefined;
    this.updatesInFlight.set(workflowId, used + 1);
    return () => {
      const left = this.updatesInFlight.get(workflowId)! - 1;
      if (left === 0) this.updatesInFlight.delete(workflowId);
      else this.updatesInFlight.set(workflowId, left);
    };
  }

  /**
   * The common case: an Update-with-Start that carries the request. When nobody waits to hear of the
   * admission (`oneTrip`), one round trip: the server answers with the outcome. Otherwise it returns
   * once the session accepted the request, and the outcome is asked for after. Undefined when refused
   * for now (the in-flight limit reached by other clients, or the run moved on first): the caller
   * admits by Signal.
   */
  private async admitByUpdate(sub: Submission, oneTrip: boolean): Promise<{ result(): Promise<RequestOutcome> } | undefined> {
    const options = {
      args: [{ requestId: sub.request.requestId, request: sub.request }] as [{ requestId: string; request: SessionRequest }],
      updateId: randomUUID(),
      startWorkflowOperation: new WithStartWorkflowOperation('sessionWorkflow', { ...sub.start, workflowIdConflictPolicy: 'USE_EXISTING' }),
    };
    try {
      if (!oneTrip) return await this.temporal.workflow.startUpdateWithStart(awaitResultUpdate, { ...options, waitForStage: 'ACCEPTED' });
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
    await retryAdmission(() => this.temporal.workflow.signalWithStart('sessionWorkflow', { ...sub.start, signal: enqueueSignal, signalArgs: [sub.request] }));
  }

  /** Asks for an admitted request's outcome until there is one, following the session across runs. */
  private async waitForOutcome(sub: Submission): Promise<Extract<RequestOutcome, { status: 'done' }>> {
    const { request, sessionKey, deadline } = sub;
    const handle = this.temporal.workflow.getHandle(sub.start.workflowId);
    for (let readmitted = false; ; ) {
      // Many senders may wait on one session; beyond Temporal's in-flight Update limit an ask is
      // refused for now and asked again, which never reorders the turns (admission already did that).
      const outcome = await retryAdmission(
        () => handle.executeUpdate(awaitResultUpdate, { args: [{ requestId: request.requestId }], updateId: randomUUID() }),
        { deadlineMs: Math.max(0, deadline - Date.now()), maxDelayMs: 3_000 },
      ).catch(closedAsUnknown);
      if (outcome.status === 'done') return outcome;
      if (outcome.status === 'failed') throw requestFailure(outcome);
      if (Date.now() > deadline) throw ApplicationFailure.create({ message: `no outcome for request ${request.requestId} after ${this.opts.waitMs ?? 86_400_000} ms`, type: FailureTypes.TurnFailed, nonRetryable: true });
      if (outcome.status === 'unknown') {
        // The session closed idle before this request reached it, or forgot it: admit it once more
        // under the same id (a session that ran it answers from its remembered ids, never twice).
        if (readmitted) throw ApplicationFailure.create({ message: `session ${sessionKey} does not know request ${request.requestId}`, type: FailureTypes.TurnFailed, nonRetryable: true });
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

/** The Update reached a workflow that has completed (it closed idle). */
function isClosedWorkflow(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: string }).name;
    const message = String((e as { message?: string }).message ?? '');
    if (name === 'WorkflowNotFoundError' || /workflow execution already completed|not found/i.test(message)) return true;
  }
  return false;
}
