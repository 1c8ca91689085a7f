/**
 * The turn's activities: the begin (session row, freshness, the user's message), the model call
 * (`model-call.ts`) and the finish of a turn that ran out of model calls. Thin wrappers that read,
 * call pure functions and the model, and write.
 */
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../src/protocol';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import { activeTranscriptBytes, appendEntriesRedacted, getEntry, tailEntries } from '../src/store/entries-repo';
import { getSession, recordTurnUsage, rotateSession } from '../src/store/sessions-repo';
import { readOrCreateSessionForTurn } from '../src/store/turn-begin-read';
import { chatTypeOf, parseSessionKey } from '../src/sessions/session-key';
import { evaluateFreshness, isSystemEvent, parseResetCommand, type SessionEventKind } from '../src/sessions/lifecycle';
import { resetPolicyOf } from '../src/config/agent-config';
import type { MessageEntry } from '../src/context/types';
import { ActiveWindowCache } from '../src/store/active-window-cache';
import { turnReplyHold } from './parts/held-reply';
import { ReceivedReplies } from './parts/received-replies';
import { addLogAttributes } from './parts/log-attributes';
import { findUnstorable } from '../src/text/storable-text';
import { loadWorkflowState, saveWorkflowState } from '../src/store/workflow-state-repo';
import type { SessionRow } from '../src/store/schema';
import type { AgentTaskScope, ResolvedRunBudget, RunBudget, SessionCarriedState, TokenUsage } from '../src/protocol';
import { resolveRunBudget } from '../src/turn/run-budget';
import { cancelledTurnEntry } from '../src/context/cancelled-turns';
import { claimAnnounce } from '../src/store/subagent-runs-repo';
import { publishSessionEvent } from '../src/streaming/session-events-channel';
import { cancelOwnWorkflow, orphanedChildren, subagentTaskText } from './parts/subagent-runs';
import { logRedactions } from './parts/model-call-report';
import { createModelCall, type CallModelInput, type ModelCallOutcome, type TurnFinish } from './parts/model-call';
import { readTurnContext, turnContext, type TurnContext } from './parts/turn-context';
import { decideAfterFinish, type FinishTurnResult } from './parts/turn-finish';
import { markApprovals } from './parts/tool-approvals';
import { whileHeartbeating } from './parts/heartbeat';

export interface BeginTurnInput {
  readonly agentId: string;
  readonly sessionKey: string;
  /** The turn's number in the session (log lines only). */
  readonly turn?: number;
  readonly userEntryId: string;
  readonly text: string;
  /** Workflow time, ISO. */
  readonly now: string;
  /** Used when the session row is created, or when a reset / expiry starts a new sessionId. */
  readonly newSessionId: string;
  /** System events (heartbeat, cron, exec notices) neither refresh nor expire freshness. */
  readonly event?: SessionEventKind;
  /** A subagent's result: the turn claims (subagent, key) before writing it; a second claimant writes nothing. */
  readonly announce?: { readonly subagentId: string; readonly key: string };
  /** A spawned child's first turn: the message is the task stored with its run. */
  readonly subagentTask?: boolean;
  /** An application's agent task: its prompt mode and tools. */
  readonly task?: AgentTaskScope;
  /** The request's run budget, over the agent's. */
  readonly budget?: RunBudget;
  /** A turn before this one was cancelled: its entries are marked (`markerId`) before this turn's message. */
  readonly cancelledTurn?: CancelledTurnRef;
}

/** A cancelled turn's first entry, and the id its marker is written with. */
export interface CancelledTurnRef {
  readonly userEntryId: string;
  readonly markerId: string;
}

export interface BeginTurnResult {
  readonly sessionId: string;
  /** The active transcript (since the last compaction) exceeds maxActiveTranscriptBytes. */
  readonly preflightCompaction: boolean;
  /** A new sessionId started (reset command, daily or idle expiry). */
  readonly rotated?: 'manual' | 'daily' | 'idle';
  /** A bare `/new` or `/reset`: nothing to send to the model. */
  readonly resetOnly: boolean;
  /** This announce was already taken by another turn: nothing was written, nothing to answer. */
  readonly duplicate?: true;
  /** Workflow ids of the subagents the reset session left running: the session cancels them. */
  readonly orphanedChildren?: readonly string[];
  /** The turn's run budget: the agent's limits, under the request's (absent from a result an earlier release recorded). */
  readonly budget?: ResolvedRunBudget;
}

/**
 * A turn's first step: the begin's work, then, when nothing stands before the model (a bare reset,
 * a duplicate announce, a preflight compaction, subagents to cancel), the turn's first model call,
 * in one activity. One workflow task and one local-activity marker fewer per turn, and the call
 * reuses what the begin read.
 */
export interface StartTurnInput extends BeginTurnInput {
  readonly call: {
    /** Deterministic id (from workflow code) of the assistant entry the first call writes. */
    readonly assistantEntryId: string;
    readonly requestId?: string;
    readonly finish: TurnFinish;
    /** The turn's own thinking level (its request's). */
    readonly thinking?: CallModelInput['thinking'];
  };
}

/** What the model call answered (absent, `kind: 'begun'`, when the workflow has work before it), with the begin's result. */
export type StartTurnResult = (ModelCallOutcome | { readonly kind: 'begun' }) & { readonly begun: BeginTurnResult };

/** A turn that ran out of model calls with tool calls pending: its usage, added to the session apart from a reply. */
export interface FinishTurnInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly usage: TokenUsage;
  readonly contextTokens: number;
  /** The window the turn's last model call was budgeted against; read from the store when absent. */
  readonly contextWindow?: number;
  readonly now: string;
  /** False for system events, which must not refresh idle/daily freshness. */
  readonly touch?: boolean;
}

/** The session a step is for. */
export interface SessionIdsInput {
  readonly agentId: string;
  readonly sessionKey: string;
}

/** A manual compaction's first step: the session it is for (`now` and `newSessionId` ride along from the workflow). */
export interface BeginCompactionInput extends SessionIdsInput {
  readonly now: string;
  readonly newSessionId: string;
}

/** The counters a session workflow saves when it closes after a quiet period. */
export interface SaveSessionCountersInput extends SessionIdsInput {
  readonly counters: SessionCarriedState;
}

/** The begin's result, with the turn's context it read (the model call that follows reads nothing again). */
interface Begun {
  readonly result: BeginTurnResult;
  readonly turn: TurnContext;
}

/** What the turn activities of a worker share: its deps, its memo of replies not stored yet, and its model call. */
interface TurnActivityContext {
  readonly allDeps: ActivityDeps;
  readonly db: ActivityDeps['db'];
  readonly replyHold: ReturnType<typeof turnReplyHold>;
  readonly modelCall: ReturnType<typeof createModelCall>['modelCall'];
}

/**
 * The turn's activities: thin wrappers that read, call pure functions and the model, and write.
 * `replies`: the worker's memo of replies received and not stored yet (shared with the flush and the summarizer).
 */
export function createTurnActivities(allDeps: ActivityDeps, replies = new ReceivedReplies()) {
  // A reply received waits here until stored: a retry after a failed write does not call the model again.
  const replyHold = turnReplyHold(replies, allDeps.config.encryptionKeys !== undefined);
  // This worker's copies of active windows: sticky execution sends a session's turns here, so a turn reads only what is new.
  const { modelCall } = createModelCall(allDeps, new ActiveWindowCache(allDeps.config.contextCacheBytes), replyHold);
  const ctx: TurnActivityContext = { allDeps, db: allDeps.db, replyHold, modelCall };
  return {
    beginTurn: (input: BeginTurnInput) => beginTurn(ctx, input),
    // Heartbeats for the whole attempt, reading and storing included: a short heartbeat timeout is safe.
    startTurn: (input: StartTurnInput) => whileHeartbeating(() => startTurn(ctx, input)),
    callModel: (input: CallModelInput) => whileHeartbeating(() => callModel(ctx, input)),
    finishTurn: (input: FinishTurnInput) => finishTurn(ctx, input),
    beginCompaction: (input: BeginCompactionInput) => beginCompaction(ctx, input),
    loadSessionCounters: (input: SessionIdsInput) => loadSessionCounters(ctx, input),
    saveSessionCounters: (input: SaveSessionCountersInput) => saveSessionCounters(ctx, input),
  };
}

/** Ensures the session row and appends the user's message once, whatever the retries. */
async function beginTurn(ctx: TurnActivityContext, input: BeginTurnInput): Promise<BeginTurnResult> {
  return (await begin(ctx, input)).result;
}

/**
 * The turn's begin, then its first model call, unless the workflow has work before it (see
 * `StartTurnInput`). A retry runs both again: each is idempotent on its own.
 */
async function startTurn(ctx: TurnActivityContext, input: StartTurnInput): Promise<StartTurnResult> {
  // Taken before anything that may fail: a reply an earlier attempt received stays held for the next.
  const held = ctx.replyHold.take(input.call.assistantEntryId);
  const { result, turn } = await begin(ctx, input);
  if (result.resetOnly || result.duplicate || result.preflightCompaction || result.orphanedChildren)
    return { kind: 'begun', begun: result };
  const { call } = input;
  const firstCall: CallModelInput = {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: result.sessionId,
    ...(input.turn !== undefined ? { turn: input.turn } : {}),
    assistantEntryId: call.assistantEntryId,
    parentId: input.userEntryId,
    now: input.now,
    precheck: true,
    ...(call.requestId !== undefined ? { requestId: call.requestId } : {}),
    finish: call.finish,
    ...(call.thinking ? { thinking: call.thinking } : {}),
    ...(input.task ? { task: input.task } : {}),
  };
  let outcome: ModelCallOutcome;
  try {
    outcome = await ctx.modelCall(firstCall, turn, held);
  } catch (err) {
    throw withBegun(err, result);
  }
  return { ...(await markApprovals(ctx.allDeps, firstCall, outcome)), begun: result };
}

/**
 * Loads the active window, calls the model and stores its reply under the given id. A retry after
 * the reply was stored returns the stored reply without calling the model again.
 */
async function callModel(ctx: TurnActivityContext, input: CallModelInput): Promise<ModelCallOutcome> {
  const held = ctx.replyHold.take(input.assistantEntryId);
  return markApprovals(ctx.allDeps, input, await ctx.modelCall(input, await readTurnContext(ctx.allDeps, input), held));
}

/**
 * beginTurn's work: the session (created, or rotated when stale), then the user's message. Also
 * returns the turn's context it read, and whether this attempt appended the message (then no reply
 * can be stored yet).
 */
async function begin(ctx: TurnActivityContext, input: BeginTurnInput): Promise<Begun> {
  // The agent's deps, resolved once for every step of the begin.
  const agent = depsForAgent(ctx.allDeps, input.agentId);
  const found = await readSession(ctx, agent, input);
  const { text, reset } = await userText(ctx, input);
  const rotation = await rotateWhenStale(ctx, agent, input, found.session, reset);
  const session = rotation?.session ?? found.session;
  const begun = (appended: boolean): TurnContext =>
    turnContext(ctx.allDeps, input.agentId, session, found.learnedWindow, { replyAbsent: appended });
  const budget = resolveRunBudget(agent.config, input.budget);
  const base = { sessionId: session.session_id, budget, ...(rotation ? { rotated: rotation.rotated } : {}) };
  // Children of the session that just ended do not go on silently: the workflow cancels them.
  const orphans = rotation ? await orphanedChildren(ctx.db, input.agentId, input.sessionKey, session.session_id) : [];
  const orphaned = orphans.length > 0 ? { orphanedChildren: orphans } : {};
  if (text === '')
    return { result: { ...base, preflightCompaction: false, resetOnly: true, ...orphaned }, turn: begun(false) };
  if (
    input.announce &&
    !(await claimAnnounce(ctx.db, input.announce.subagentId, input.announce.key, input.userEntryId, input.now))
  ) {
    return {
      result: { ...base, preflightCompaction: false, resetOnly: false, duplicate: true },
      turn: begun(false),
    };
  }
  const lastEntryId = rotation ? rotation.lastEntryId : await markCancelledTurn(ctx, input, session, found.lastEntryId);
  const appended = await appendUserMessage(ctx, agent, input, session, text, lastEntryId);
  // A subagent's report is heard on the session's event streams.
  if (appended && input.announce) await publishSessionEvent(ctx.db, input, (m, f) => log.warn(m, f));
  const limit = agent.config.maxActiveTranscriptBytes;
  const preflightCompaction =
    limit > 0 && (await activeTranscriptBytes(ctx.db, input.agentId, session.session_id)) > limit;
  return { result: { ...base, preflightCompaction, resetOnly: false, ...orphaned }, turn: begun(appended) };
}

/**
 * The session row, its model's learned window and the transcript's last entry (the user message's
 * parent) in one statement, which also releases the raw arguments of abandoned tool calls: no
 * secret outlives the turn that needed it, even when a tool failed for good. A new session's row
 * is created first, then read the same way.
 */
async function readSession(ctx: TurnActivityContext, deps: ActivityDeps, input: BeginTurnInput) {
  const found = await readOrCreateSessionForTurn(ctx.db, {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    defaultModel: deps.config.model,
    releaseToolArgsBefore: input.now,
    create: { newSessionId: input.newSessionId, now: new Date(input.now), chatType: chatTypeOfKey(input.sessionKey) },
  });
  // The input names no session id (this finds it): the activity's later lines name it.
  addLogAttributes({ sessionId: found.session.session_id });
  return found;
}

/** The message the turn stores (a subagent's task is read from its run) and the reset command it carries, if any. */
async function userText(ctx: TurnActivityContext, input: BeginTurnInput): Promise<{ text: string; reset: boolean }> {
  const message = input.subagentTask
    ? await subagentTaskText(ctx.db, input.agentId, input.sessionKey, () => cancelOwnWorkflow(ctx.allDeps))
    : input.text;
  const reset = parseResetCommand(message);
  return { text: reset ? (reset.remainder ?? '') : message, reset: reset !== undefined };
}

/**
 * Freshness (OpenClaw session reset): a reset command, the daily boundary or idle expiry starts a
 * new sessionId. The new id is deterministic, so a retried beginTurn never rotates twice. Returns
 * the new session, why it started and its last entry; undefined when the session goes on.
 */
async function rotateWhenStale(
  ctx: TurnActivityContext,
  agent: ActivityDeps,
  input: BeginTurnInput,
  session: SessionRow,
  resetRequested: boolean,
) {
  // System events neither refresh nor expire freshness.
  if ((input.event !== undefined && isSystemEvent(input.event)) || session.session_id === input.newSessionId)
    return undefined;
  const now = new Date(input.now);
  const freshness = evaluateFreshness(
    { sessionStartedAt: session.session_started_at, lastInteractionAt: session.last_interaction_at },
    { now, policy: resetPolicyOf(agent.config), resetRequested },
  );
  if (
    freshness.fresh ||
    !(await rotateSession(ctx.db, {
      agentId: input.agentId,
      sessionKey: input.sessionKey,
      newSessionId: input.newSessionId,
      now,
    }))
  )
    return undefined;
  const rotated = (await getSession(ctx.db, input.agentId, input.sessionKey))!;
  addLogAttributes({ sessionId: rotated.session_id });
  return {
    session: rotated,
    rotated: freshness.reason,
    lastEntryId: (await tailEntries(ctx.db, input.agentId, rotated.session_id, 1))[0]?.id,
  };
}

/**
 * Appends the user's message, redacted, unless this is a retry that finds it already last (nothing
 * is appended before the model call). A retried startTurn may find its reply after it: the append's
 * conflict on the id then writes nothing. Returns whether this attempt appended it.
 */
async function appendUserMessage(
  ctx: TurnActivityContext,
  agent: ActivityDeps,
  input: BeginTurnInput,
  session: SessionRow,
  text: string,
  lastEntryId: string | undefined,
): Promise<boolean> {
  // The store replaces what PostgreSQL cannot hold (NUL, lone surrogates); say so once, here.
  const unstorable = findUnstorable(text);
  if (unstorable)
    log.warn('user message had characters PostgreSQL cannot store; stored with U+FFFD in their place', {
      sessionKey: input.sessionKey,
      ...unstorable,
    });
  if (lastEntryId === input.userEntryId) return false;
  const entry: MessageEntry = {
    type: 'message',
    id: input.userEntryId,
    parentId: lastEntryId ?? null,
    timestamp: input.now,
    message: { role: 'user', content: text, timestamp: Date.parse(input.now) },
    ...(input.event && input.event !== 'user_message' && input.event !== 'subagent_announce'
      ? { systemEvent: input.event }
      : {}),
  };
  const estimate = agent.estimate(entry.message);
  const { inserted, redactions } = await appendEntriesRedacted(ctx.db, input.agentId, session.session_id, [
    { entry, tokenEstimate: estimate },
  ]);
  logRedactions('user_message', redactions, { entryId: entry.id });
  return inserted > 0;
}

/**
 * The cancelled turn before this one is marked, so its entries never reach a model again; returns
 * the entry this turn's message follows. Once, whatever the retries: nothing is written when the
 * marker or this turn's message is already the last entry, or the turn left no entry in this session.
 */
async function markCancelledTurn(
  ctx: TurnActivityContext,
  input: BeginTurnInput,
  session: SessionRow,
  lastEntryId: string | undefined,
): Promise<string | undefined> {
  const cancelled = input.cancelledTurn;
  if (!cancelled || lastEntryId === cancelled.markerId || lastEntryId === input.userEntryId) return lastEntryId;
  // A turn cancelled before its message was stored, or in a session since reset, has nothing here to mark.
  if (!(await getEntry(ctx.db, input.agentId, session.session_id, cancelled.userEntryId))) return lastEntryId;
  const entry = cancelledTurnEntry(cancelled.markerId, lastEntryId ?? null, cancelled.userEntryId, input.now);
  await appendEntriesRedacted(ctx.db, input.agentId, session.session_id, [{ entry, tokenEstimate: 0 }]);
  return cancelled.markerId;
}

/**
 * Finds the session a manual compaction is for. An unknown key fails with a non-retryable
 * `KeelUnknownSession` and creates nothing: a typo must not become a session.
 */
async function beginCompaction(ctx: TurnActivityContext, input: BeginCompactionInput): Promise<{ sessionId: string }> {
  const session = await getSession(ctx.db, input.agentId, input.sessionKey);
  if (!session) {
    throw ApplicationFailure.create({
      message: `agent ${input.agentId} has no session ${input.sessionKey}; nothing to compact (check the key: sessions exist once a message was sent or imported)`,
      type: FailureTypes.UnknownSession,
      nonRetryable: true,
    });
  }
  return { sessionId: session.session_id };
}

/** Adds the turn's usage to the session counters and decides flush and compaction from them. */
async function finishTurn(ctx: TurnActivityContext, input: FinishTurnInput): Promise<FinishTurnResult> {
  const session = await recordTurnUsage(ctx.db, { ...input, now: new Date(input.now) });
  // The turn's model call read the window a moment ago: reading model_limits again would only repeat it.
  const turn = input.contextWindow === undefined ? await readTurnContext(ctx.allDeps, input) : undefined;
  const agent = turn ?? turnContext(ctx.allDeps, input.agentId, session, undefined, { replyAbsent: false });
  return decideAfterFinish(agent, session, input.contextTokens, input.contextWindow ?? agent.window);
}

/** The counters a session workflow saved when it closed idle (undefined for a session never closed). */
async function loadSessionCounters(
  ctx: TurnActivityContext,
  input: SessionIdsInput,
): Promise<Partial<SessionCarriedState> | undefined> {
  return loadWorkflowState(ctx.db, input.agentId, input.sessionKey);
}

/** Saves the counters of a session workflow that closes after a quiet period. */
async function saveSessionCounters(ctx: TurnActivityContext, input: SaveSessionCountersInput): Promise<void> {
  await saveWorkflowState(ctx.db, input.agentId, input.sessionKey, input.counters);
}

/** The begin's result as the last detail of a first call's overflow failure. */
export interface OverflowBegun {
  readonly begun: BeginTurnResult;
}

/**
 * A first call the model refused as too long carries the begin's result on its failure, so the
 * workflow answers it with a compaction without reading the begin again; other failures pass as they are.
 */
function withBegun(err: unknown, begun: BeginTurnResult): unknown {
  if (!(err instanceof ApplicationFailure) || err.type !== FailureTypes.ContextOverflow) return err;
  const detail: OverflowBegun = { begun };
  return ApplicationFailure.create({
    message: err.message,
    type: err.type,
    nonRetryable: err.nonRetryable === true,
    details: [...(err.details ?? []), detail],
    ...(err.cause ? { cause: err.cause } : {}),
  });
}

/** The row's chat_type (direct, group, channel, main, cron, hook, subagent); null for a key Keel cannot parse (imported). */
function chatTypeOfKey(sessionKey: string): string | null {
  try {
    return chatTypeOf(parseSessionKey(sessionKey));
  } catch {
    return null;
  }
}
