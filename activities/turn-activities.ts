import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../src/protocol';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import { activeTranscriptBytes, appendEntriesRedacted, tailEntries, getEntry } from '../src/store/entries-repo';
import { getSession, recordTurnUsage, rotateSession } from '../src/store/sessions-repo';
import { readOrCreateSessionForTurn } from '../src/store/turn-begin-read';
import { chatTypeOf, parseSessionKey } from '../src/sessions/session-key';
import { evaluateFreshness, isSystemEvent, parseResetCommand, type SessionEventKind } from '../src/sessions/lifecycle';
import type { KeelConfig } from '../src/config/keel-config';
import { compactionHoldLimit, decideAfterTurn, type AfterTurnDecision } from '../src/turn/turn-decisions';
import { maxOutputTokensFor, reserveForWindow } from '../src/context/context-window';
import { compactionHoldInput } from './compaction-hold';
import type { AssistantMessage, MessageEntry, ToolCallBlock } from '../src/context/types';
import { prepareModelCall } from './system-prompt-for-turn';
import { ActiveWindowCache } from '../src/store/active-window-cache';
import { isToolCallBlock } from '../src/context/types';
import { toActivityFailure } from '../src/model/failures';
import { startHeartbeat } from './heartbeat';
import { turnReplyHold } from './held-reply';
import { ReceivedReplies } from './received-replies';
import type { ModelResponse } from '../src/model/model-client';
import { addLogAttributes } from './log-attributes';
import { findUnstorable, storableText } from '../src/text/storable-text';
import { learnFromOverflow, learnFromUsage, windowInForce } from './model-window';
import { estimateScaleFor, getLearnedWindow } from '../src/store/model-limits-repo';
import { modelOf } from './session-model';
import { configuredWindow } from '../src/config/configured-window';
import { loadWorkflowState, saveWorkflowState } from '../src/store/workflow-state-repo';
import { appendReplyKeepingToolArgs } from '../src/store/pending-tool-args-repo';
import { appendFinalReplyRecordingUsage } from '../src/store/final-reply-repo';
import type { SessionRow } from '../src/store/schema';
import type { ContextSplit, PromptCacheCounters, SessionCarriedState, TurnUsage } from '../src/protocol';
import { openReplyStream } from '../src/streaming/reply-publisher';
import { claimAnnounce } from '../src/store/subagent-runs-repo';
import { orphanedChildren, subagentTaskText } from './subagent-runs';
import { contextRepairs, logRedactions, redactionCounts } from './model-call-report';
import { finishRecordedProviderCompaction, recordProviderCompaction } from './provider-compaction';
import type { CompactionEntry } from '../src/context/types';
import type { AgentTaskScope, CompactionWorkflowResult } from '../src/protocol';

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
}

export interface CallModelInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** The turn's number in the session (log lines only). */
  readonly turn?: number;
  /** Deterministic id (from workflow code) of the assistant entry this call writes. */
  readonly assistantEntryId: string;
  readonly parentId: string;
  readonly now: string;
  /**
   * Mid-turn precheck: when the prepared context no longer fits the budget, return `overBudget`
   * instead of calling the model, so the workflow compacts first. Off after a compaction this turn.
   */
  readonly precheck: boolean;
  /** The client request this turn answers: its reply streams on that request's channel. */
  readonly requestId?: string;
  /**
   * Set by sessions that finish their turn in its last model call (one step fewer per turn): when the
   * reply has no tool calls, the call adds the turn's usage to the session row with the reply, in one
   * statement, and returns what finishTurn would have.
   */
  readonly finish?: TurnFinish;
  /** An application's agent task: its prompt mode and tools. */
  readonly task?: AgentTaskScope;
}

/** What finishing a turn needs besides this call: the usage of the turn's earlier calls, and whether it refreshes freshness. */
export interface TurnFinish {
  readonly usageBefore: TurnUsage;
  /** False for system events, which must not refresh idle/daily freshness. */
  readonly touch: boolean;
}

/**
 * A turn's first step on sessions started on the begin-in-model-call patch: `beginTurn`'s work, then,
 * when nothing stands before the model (a bare reset, a duplicate announce, a preflight compaction,
 * subagents to cancel), the turn's first model call, in one activity. One workflow task and one
 * local-activity marker fewer per turn, and the call reuses what the begin read.
 */
export interface StartTurnInput extends BeginTurnInput {
  readonly call: {
    /** Deterministic id (from workflow code) of the assistant entry the first call writes. */
    readonly assistantEntryId: string;
    readonly requestId?: string;
    readonly finish?: TurnFinish;
  };
}

/** What the model call answered (absent, `kind: 'begun'`, when the workflow has work before it), with the begin's result. */
export type StartTurnResult = (ModelCallOutcome | { readonly kind: 'begun' }) & { readonly begun: BeginTurnResult };

/** What one model call can answer. */
export type ModelCallOutcome = CallModelResult | OverBudgetResult | CompactedResult;

/** The context did not fit: compact, then call again. */
export interface OverBudgetResult {
  readonly kind: 'overBudget';
  readonly estimatedTokens: number;
  readonly budget: number;
}

/**
 * The provider compacted the conversation and paused (Anthropic server compaction): Keel recorded it
 * as a compaction; call the model again, and the next request starts from its block.
 */
export interface CompactedResult {
  readonly kind: 'compacted';
  readonly compaction: CompactionWorkflowResult;
}

/** What the workflow needs from a model call: ids and counts, plus the reply text it returns. */
export interface CallModelResult {
  readonly kind: 'reply';
  readonly entryId: string;
  readonly text: string;
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string }>;
  readonly stopReason: string;
  readonly usage: TurnUsage;
  /** Estimated tokens of the context sent, plus the reply. */
  readonly contextTokens: number;
  /** What the context sent was made of (absent when a retry found the reply already stored). */
  readonly split?: ContextSplit;
  /** The model's window this call was budgeted against (absent with `split`): finishTurn need not read it again. */
  readonly contextWindow?: number;
  /** The turn finished with this call (`finish` was given and the reply has no tool calls): no finishTurn follows. */
  readonly finished?: FinishTurnResult;
}

export interface FinishTurnInput {
  readonly agentId: string;
  readonly sessionKey: string;
  /** Uncached prompt tokens (the provider's `input_tokens`). */
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Prompt tokens read from / written to the provider's prompt cache. */
  readonly cacheReadTokens?: number;
  readonly cacheWriteTokens?: number;
  readonly contextTokens: number;
  /** The window the turn's last model call was budgeted against; read from the store when absent. */
  readonly contextWindow?: number;
  readonly now: string;
  /** False for system events, which must not refresh idle/daily freshness. */
  readonly touch?: boolean;
}

/** The counters after the turn and what maintenance they call for. */
export interface FinishTurnResult extends AfterTurnDecision {
  readonly contextTokens: number;
  /** The window in force: configured, or lower when a provider limit was learned. */
  readonly contextWindow: number;
  /** The configured window (status shows both when they differ). */
  readonly configuredContextWindow: number;
  readonly compactionCount: number;
  /** The session's prompt tokens since it started, by how the provider's cache served them. */
  readonly promptCache: PromptCacheCounters;
  /** The model the session's turns call (its override, else the agent's). */
  readonly model: string;
}

/**
 * The turn's activities: thin wrappers that read, call pure functions and the model, and write.
 * `replies`: the worker's memo of replies received and not stored yet (shared with the flush and the summarizer).
 */
export function createTurnActivities(allDeps: ActivityDeps, replies = new ReceivedReplies()) {
  const { db } = allDeps;
  // A reply received waits here until stored: a retry after a failed write does not call the model again.
  const replyHold = turnReplyHold(replies, allDeps.config.encryptionKeys !== undefined);
  // This worker's copies of active windows: sticky execution sends a session's turns here, so a turn reads only what is new.
  const windows = new ActiveWindowCache(allDeps.config.contextCacheBytes);

  /** Ensures the session row and appends the user's message once, whatever the retries. */
  async function beginTurn(input: BeginTurnInput): Promise<BeginTurnResult> {
    return (await begin(input)).result;
  }

  /**
   * The turn's begin, then its first model call, unless the workflow has work before it (see
   * `StartTurnInput`). A retry runs both again: each is idempotent on its own.
   */
  async function startTurn(input: StartTurnInput): Promise<StartTurnResult> {
    // Taken before anything that may fail: a reply an earlier attempt received stays held for the next.
    const held = replyHold.take(input.call.assistantEntryId);
    const begun = await begin(input);
    const { result } = begun;
    if (result.resetOnly || result.duplicate || result.preflightCompaction || result.orphanedChildren) return { kind: 'begun', begun: result };
    const { call } = input;
    const outcome = await modelCall(
      {
        agentId: input.agentId,
        sessionKey: input.sessionKey,
        sessionId: result.sessionId,
        ...(input.turn !== undefined ? { turn: input.turn } : {}),
        assistantEntryId: call.assistantEntryId,
        parentId: input.userEntryId,
        now: input.now,
        precheck: true,
        ...(call.requestId !== undefined ? { requestId: call.requestId } : {}),
        ...(call.finish ? { finish: call.finish } : {}),
        ...(input.task ? { task: input.task } : {}),
      },
      { session: begun.session, replyAbsent: begun.appended, window: begun.window },
      held,
    );
    return { ...outcome, begun: result };
  }

  /**
   * beginTurn's work. Also returns the session row it read (the model call that follows needs no
   * second read) and whether this attempt appended the user's message (then no reply can be stored yet).
   */
  async function begin(input: BeginTurnInput): Promise<{ result: BeginTurnResult; session: SessionRow; appended: boolean; window: number }> {
    const deps = depsForAgent(allDeps, input.agentId);
    const now = new Date(input.now);
    // The session row, its model's learned window (the model call needs it) and the transcript's
    // last entry (the user message's parent) in one statement, which also releases the raw arguments
    // of abandoned tool calls: no secret outlives the turn that needed it, even when a tool failed for
    // good. A new session's row is created first, then read the same way.
    const found = await readOrCreateSessionForTurn(db, {
      agentId: input.agentId,
      sessionKey: input.sessionKey,
      defaultModel: deps.config.model,
      releaseToolArgsBefore: input.now,
      create: { newSessionId: input.newSessionId, now, chatType: chatTypeOfKey(input.sessionKey) },
    });
    let session = found.session;
    // The input names no session id (this finds it): the activity's later lines name it.
    addLogAttributes({ sessionId: session.session_id });
    // The session's model's window: the learned one (read with the row), scaled by the row's scale for that model.
    const windowOf = (row: SessionRow): number => {
      const model = modelOf(deps, row);
      return windowInForce(deps, model, found.learnedWindow, estimateScaleFor(row, model));
    };
    let window = windowOf(session);
    let lastId = found.lastEntryId;
    const message = input.subagentTask ? await subagentTaskText(db, input.agentId, input.sessionKey) : input.text;
    const reset = parseResetCommand(message);
    const text = reset ? (reset.remainder ?? '') : message;
    // Freshness (OpenClaw session reset): a reset command, the daily boundary or idle expiry starts a new sessionId.
    // The new id is deterministic, so a retried beginTurn never rotates twice.
    let rotated: BeginTurnResult['rotated'];
    const systemEvent = input.event !== undefined && isSystemEvent(input.event);
    if (!systemEvent && session.session_id !== input.newSessionId) {
      const freshness = evaluateFreshness(
        { sessionStartedAt: session.session_started_at, lastInteractionAt: session.last_interaction_at },
        { now, policy: resetPolicy(deps.config), resetRequested: reset !== undefined },
      );
      if (!freshness.fresh && (await rotateSession(db, { agentId: input.agentId, sessionKey: input.sessionKey, newSessionId: input.newSessionId, now }))) {
        rotated = freshness.reason;
        session = (await getSession(db, input.agentId, input.sessionKey))!;
        addLogAttributes({ sessionId: session.session_id });
        // The new session starts without the old one's estimate scale.
        window = windowOf(session);
        lastId = (await tailEntries(db, input.agentId, session.session_id, 1))[0]?.id;
      }
    }
    // Children of the session that just ended do not go on silently: the workflow cancels them.
    const orphans = rotated ? await orphanedChildren(db, input.agentId, input.sessionKey, session.session_id) : [];
    const orphanedChildrenPart = orphans.length > 0 ? { orphanedChildren: orphans } : {};
    if (text === '') return { result: { sessionId: session.session_id, preflightCompaction: false, resetOnly: true, ...(rotated ? { rotated } : {}), ...orphanedChildrenPart }, session, appended: false, window };
    if (input.announce && !(await claimAnnounce(db, input.announce.subagentId, input.announce.key, input.userEntryId, input.now))) {
      return { result: { sessionId: session.session_id, preflightCompaction: false, resetOnly: false, duplicate: true }, session, appended: false, window };
    }
    // The store replaces what PostgreSQL cannot hold (NUL, lone surrogates); say so once, here.
    const unstorable = findUnstorable(text);
    if (unstorable) log.warn('user message had characters PostgreSQL cannot store; stored with U+FFFD in their place', { sessionKey: input.sessionKey, ...unstorable });
    // A retried beginTurn finds its own entry last (nothing is appended before the model call). A
    // retried startTurn may find its reply after it: the append's conflict on the id then writes nothing.
    let appended = false;
    if (lastId !== input.userEntryId) {
      const entry: MessageEntry = {
        type: 'message',
        id: input.userEntryId,
        parentId: lastId ?? null,
        timestamp: input.now,
        message: { role: 'user', content: text, timestamp: Date.parse(input.now) },
      };
      const { inserted, redactions } = await appendEntriesRedacted(db, input.agentId, session.session_id, [{ entry, tokenEstimate: deps.estimate(entry.message) }]);
      appended = inserted > 0;
      logRedactions('user_message', redactions, { entryId: entry.id });
    }
    const limit = deps.config.maxActiveTranscriptBytes;
    const preflightCompaction = limit > 0 && (await activeTranscriptBytes(db, input.agentId, session.session_id)) > limit;
    return { result: { sessionId: session.session_id, preflightCompaction, resetOnly: false, ...(rotated ? { rotated } : {}), ...orphanedChildrenPart }, session, appended, window };
  }

  /**
   * Loads the active window, calls the model and stores its reply under the given id. A retry after
   * the reply was stored returns the stored reply without calling the model again.
   */
  async function callModel(input: CallModelInput): Promise<ModelCallOutcome> {
    return modelCall(input, undefined, replyHold.take(input.assistantEntryId));
  }

  /**
   * callModel's work. `known`, from a begin just done in the same activity: the session row it read,
   * whether it appended the user's message (then this call's reply cannot be stored yet), and the
   * model's window in force, read with the row. `held`: the reply an earlier attempt received and
   * could not store; it is stored now, and the model is not called again.
   */
  async function modelCall(input: CallModelInput, known?: { session: SessionRow; replyAbsent: boolean; window?: number }, held?: ModelResponse): Promise<ModelCallOutcome> {
    const deps = depsForAgent(allDeps, input.agentId);
    const stored = known?.replyAbsent ? undefined : await getEntry(db, input.agentId, input.sessionId, input.assistantEntryId);
    if (stored) replyHold.release(input.assistantEntryId);
    if (stored?.type === 'compaction') {
      const compaction = await finishRecordedProviderCompaction(deps, input, stored.payload as unknown as CompactionEntry);
      return { kind: 'compacted', compaction };
    }
    if (stored) {
      // A retry after the reply was stored: the attempt that stored a final reply also counted the turn.
      const reply = describeReply(stored.payload as unknown as MessageEntry, stored.token_estimate ?? 0);
      return input.finish && reply.toolCalls.length === 0 ? { ...reply, finished: await finishedEarlier(deps, input) } : reply;
    }

    // One read of the session row serves the model choice and the system prompt's after-compaction part.
    const session = known?.session ?? (await getSession(db, input.agentId, input.sessionKey));
    const model = modelOf(deps, session);
    // The system prompt and the tools count against the budget; the messages get what they leave.
    const { context, system, split, contextTokens, tools } = await prepareModelCall(deps, { ...input, model, session, ...(known?.window !== undefined ? { window: known.window } : {}) }, windows);
    if (!held && input.precheck && context.estimatedTokens > context.budget) {
      // After a low-yield compaction the pre-call check waits like threshold compaction does (no storm).
      const hold = compactionHoldLimit(compactionHoldInput(session, deps.config, context.window), reserveForWindow(context.window, deps.config));
      if (hold === undefined || contextTokens >= hold) return { kind: 'overBudget', estimatedTokens: context.estimatedTokens, budget: context.budget };
    }
    const calledAt = performance.now();
    /** The model call itself, streaming the reply to the client; the reply is held until stored. */
    async function requestReply(): Promise<ModelResponse> {
      const heartbeat = startHeartbeat();
      const stream = openReplyStream(db, { ...input, call: input.assistantEntryId, attempt: Context.current().info.attempt, warn: (m, f) => log.warn(m, f) });
      let reply;
      try {
        reply = await deps.model.complete(
          {
            model,
            system,
            messages: context.messages,
            maxTokens: maxOutputTokensFor(context.window, deps.config),
            tools,
            promptCaching: deps.config.promptCaching,
            ...(context.contextManagement ? { contextManagement: context.contextManagement } : {}),
            ...(context.providerCompaction ? { providerCompaction: context.providerCompaction } : {}),
          },
          { signal: Context.current().cancellationSignal, onEvent: () => heartbeat.beat(), ...(stream ? { onText: stream.push } : {}) },
        );
      } catch (err) {
        stream?.stop();
        allDeps.metrics?.modelCall(input.agentId, (performance.now() - calledAt) / 1000, 'error');
        // The provider's real limit is lower than Keel's window: remember it, so the compaction that
        // answers this overflow (and every later call) plans within it.
        await learnFromOverflow(deps, model, err, contextTokens, { agentId: input.agentId, sessionKey: input.sessionKey }).catch(() => undefined);
        throw toActivityFailure(err);
      } finally {
        heartbeat.stop();
      }
      // Held before the steps that write (the stream's end among them): their failure must not bill the call again.
      replyHold.hold(input.assistantEntryId, reply);
      await stream?.finish();
      return reply;
    }
    const reply = held ?? (await requestReply());
    const modelMs = Math.round(performance.now() - calledAt);
    if (reply.compaction) {
      // The reply is the block alone (its usage is the compaction's, reported apart): nothing to store as a message.
      allDeps.metrics?.modelCall(input.agentId, modelMs / 1000, 'ok');
      log.info('model_call', { event: 'model_call', model, modelMs, contextTokens, budget: context.budget, stopReason: reply.stopReason, contextEdits: reply.appliedEdits ?? [], compactionUsage: reply.compactionUsage });
      const compaction = await recordProviderCompaction(deps, { ...input, tokensBefore: contextTokens, ...(reply.compactionUsage ? { usage: reply.compactionUsage } : {}) }, reply.compaction);
      replyHold.release(input.assistantEntryId);
      // The provider's compaction failed: Keel's own compaction (and its extractive fallback) takes over.
      if (!compaction) return { kind: 'overBudget', estimatedTokens: context.estimatedTokens, budget: context.budget };
      return { kind: 'compacted', compaction };
    }
    const message: AssistantMessage = {
      role: 'assistant',
      content: reply.content,
      stopReason: reply.stopReason,
      model: reply.model,
      usage: { input: reply.usage.input, output: reply.usage.output, cacheRead: reply.usage.cacheRead ?? 0, cacheWrite: reply.usage.cacheWrite ?? 0 },
      timestamp: Date.parse(input.now),
    };
    const entry: MessageEntry = { type: 'message', id: input.assistantEntryId, parentId: input.parentId, timestamp: input.now, message };
    // A session whose estimate once fell short measures it again on every large prompt (rarely a write);
    // a raised scale is the window the turn's after-turn decisions and status use.
    const estimateScale = estimateScaleFor(session, model);
    const raisedWindow =
      estimateScale === undefined
        ? undefined
        : await learnFromUsage(
            deps,
            { model, agentId: input.agentId, sessionKey: input.sessionKey, sessionId: input.sessionId, estimateScale },
            { estimatedPromptTokens: contextTokens, budget: context.budget, reply },
          ).catch((err: unknown) => void log.warn('could not record the estimate scale a reply measured', { sessionKey: input.sessionKey, error: String(err) }));
    const window = raisedWindow ?? context.window;
    const replyTokens = deps.estimate(message);
    const final = !message.content.some((b) => isToolCallBlock(b));
    // Stored redacted; the tool calls' raw arguments wait in pending_tool_args for runTool. A final
    // reply of a session that finishes here is stored with the turn's usage, in one statement.
    const { inserted, redactions, session: finishedRow } =
      input.finish && final
        ? await appendFinalReplyRecordingUsage(db, input.sessionId, { entry, tokenEstimate: replyTokens }, {
            agentId: input.agentId,
            sessionKey: input.sessionKey,
            ...turnUsageWith(input.finish.usageBefore, message),
            contextTokens: contextTokens + replyTokens,
            now: new Date(input.now),
            touch: input.finish.touch,
          })
        : { ...(await appendReplyKeepingToolArgs(db, input.agentId, input.sessionId, { entry, tokenEstimate: replyTokens })), session: undefined };
    replyHold.release(input.assistantEntryId);
    const repairs = contextRepairs(context);
    const usage = { input: reply.usage.input, output: reply.usage.output, cache_read: reply.usage.cacheRead ?? 0, cache_write: reply.usage.cacheWrite ?? 0 };
    allDeps.metrics?.modelCall(input.agentId, modelMs / 1000, 'ok');
    allDeps.metrics?.usage(input.agentId, usage);
    allDeps.metrics?.repairs(input.agentId, repairs);
    // What shaped this call, once per call: why it was slow, what the pipeline repaired, truncated and redacted.
    log.info('model_call', {
      event: 'model_call',
      model,
      modelMs,
      tokens: usage,
      contextTokens,
      budget: context.budget,
      window: context.windowLoad,
      pipeline: context.pipelineRun,
      stopReason: reply.stopReason,
      repairs: Object.fromEntries(Object.entries(repairs).filter(([, n]) => n > 0)),
      truncated: context.truncated.map((t) => ({ toolCallId: t.toolCallId, originalChars: t.originalChars, keptChars: t.keptChars })),
      redacted: redactionCounts(redactions),
      ...(reply.appliedEdits ? { contextEdits: reply.appliedEdits } : {}),
      // An earlier attempt received this reply and could not store it: the model was not called again.
      ...(held ? { heldReply: true } : {}),
    });
    // The turn's last model call (no tool calls): the engine's afterTurn sees what the model saw plus the reply.
    if (inserted > 0 && final) {
      await context.engineInstance.afterTurn?.({
        sessionId: input.sessionId,
        sessionKey: input.sessionKey,
        messages: [...context.messages, message],
        contextTokens: contextTokens + replyTokens,
      });
    }
    if (inserted === 0) {
      // A dead attempt's append landed first: the stored reply is the one the transcript holds (and that attempt counted the turn).
      const winner = await getEntry(db, input.agentId, input.sessionId, input.assistantEntryId);
      if (winner) {
        const landed = { ...describeReply(winner.payload as unknown as MessageEntry, contextTokens + (winner.token_estimate ?? 0)), split, contextWindow: window };
        return input.finish && final ? { ...landed, finished: await finishedEarlier(deps, input, window) } : landed;
      }
    }
    const result = { ...describeReply(entry, contextTokens + replyTokens), split, contextWindow: window };
    return finishedRow ? { ...result, finished: await decideAfterFinish(deps, input.agentId, finishedRow, contextTokens + replyTokens, window) } : result;
  }

  /**
   * Finds the session a manual compaction is for. An unknown key fails with a non-retryable
   * `KeelUnknownSession` and creates nothing: a typo must not become a session.
   */
  async function beginCompaction(input: { agentId: string; sessionKey: string; now: string; newSessionId: string }): Promise<{ sessionId: string }> {
    const session = await getSession(db, input.agentId, input.sessionKey);
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
  async function finishTurn(input: FinishTurnInput): Promise<FinishTurnResult> {
    const deps = depsForAgent(allDeps, input.agentId);
    const session = await recordTurnUsage(db, { ...input, now: new Date(input.now) });
    return decideAfterFinish(deps, input.agentId, session, input.contextTokens, input.contextWindow);
  }

  /** What a finished turn calls for (flush, compaction), from the session row its usage was added to. */
  async function decideAfterFinish(deps: ActivityDeps, agentId: string, session: SessionRow | undefined, contextTokens: number, knownWindow?: number): Promise<FinishTurnResult> {
    const model = modelOf(deps, session);
    // The turn's model call read the window a moment ago: reading model_limits again would only repeat it.
    const contextWindow = knownWindow ?? windowInForce(deps, model, await getLearnedWindow(db, model), estimateScaleFor(session, model));
    allDeps.metrics?.pressure(agentId, contextTokens / contextWindow);
    const decision = decideAfterTurn({
      ...compactionHoldInput(session, deps.config, contextWindow),
      contextTokens,
      reserveTokens: deps.config.reserveTokens,
      reserveTokensFloor: deps.config.reserveTokensFloor,
      softThresholdTokens: deps.config.softThresholdTokens,
      compactionCount: session?.compaction_count ?? 0,
      memoryFlushCompactionCount: session?.memory_flush_compaction_count ?? null,
      compactionFailures: session?.compaction_failures ?? 0,
    });
    return {
      ...decision,
      contextTokens,
      contextWindow,
      configuredContextWindow: configuredWindow(deps.config, model).tokens,
      compactionCount: session?.compaction_count ?? 0,
      promptCache: {
        uncachedTokens: Number(session?.input_tokens ?? 0),
        readTokens: Number(session?.cache_read_tokens ?? 0),
        writeTokens: Number(session?.cache_write_tokens ?? 0),
      },
      model,
    };
  }

  /** A final reply stored by an earlier attempt, which counted the turn: the decisions from the row as it is. */
  async function finishedEarlier(deps: ActivityDeps, input: CallModelInput, knownWindow?: number): Promise<FinishTurnResult> {
    const session = await getSession(db, input.agentId, input.sessionKey);
    return decideAfterFinish(deps, input.agentId, session, Number(session?.context_tokens ?? 0), knownWindow);
  }

  /** The counters a session workflow saved when it closed idle (undefined for a session never closed). */
  async function loadSessionCounters(input: { agentId: string; sessionKey: string }): Promise<Partial<SessionCarriedState> | undefined> {
    return loadWorkflowState(db, input.agentId, input.sessionKey);
  }

  /** Saves the counters of a session workflow that closes after a quiet period. */
  async function saveSessionCounters(input: { agentId: string; sessionKey: string; counters: SessionCarriedState }): Promise<void> {
    await saveWorkflowState(db, input.agentId, input.sessionKey, input.counters);
  }

  return { beginTurn, startTurn, callModel, finishTurn, beginCompaction, loadSessionCounters, saveSessionCounters };
}

/** The freshness policy from config (OpenClaw: daily at 04:00 local, or idle; whichever first). */
function resetPolicy(config: KeelConfig) {
  return {
    mode: config.resetMode,
    dailyResetHour: config.resetHour,
    timeZone: config.resetTimeZone,
    ...(config.idleMinutes !== undefined ? { idleMinutes: config.idleMinutes } : {}),
  };
}

/** The turn's usage with this reply's added (the same fields `describeReply` reports). */
function turnUsageWith(before: TurnUsage, message: AssistantMessage): Required<TurnUsage> {
  return {
    inputTokens: before.inputTokens + (message.usage?.input ?? 0),
    outputTokens: before.outputTokens + (message.usage?.output ?? 0),
    cacheReadTokens: (before.cacheReadTokens ?? 0) + (message.usage?.cacheRead ?? 0),
    cacheWriteTokens: (before.cacheWriteTokens ?? 0) + (message.usage?.cacheWrite ?? 0),
  };
}

function describeReply(entry: MessageEntry, contextTokens: number): CallModelResult {
  const message = entry.message as AssistantMessage;
  // The reply as stored: the same storable-text rule the transcript applies.
  const text = storableText(
    message.content
      .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
      .map((b) => b.text)
      .join(''),
  );
  const toolCalls = message.content.filter((b) => isToolCallBlock(b)).map((b) => ({ id: (b as ToolCallBlock).id, name: (b as ToolCallBlock).name }));
  return {
    kind: 'reply',
    entryId: entry.id,
    text,
    toolCalls,
    stopReason: message.stopReason ?? 'stop',
    usage: {
      inputTokens: message.usage?.input ?? 0,
      outputTokens: message.usage?.output ?? 0,
      cacheReadTokens: message.usage?.cacheRead ?? 0,
      cacheWriteTokens: message.usage?.cacheWrite ?? 0,
    },
    contextTokens,
  };
}

/** The row's chat_type (direct, group, channel, main, cron, hook, subagent); null for a key Keel cannot parse (imported). */
function chatTypeOfKey(sessionKey: string): string | null {
  try {
    return chatTypeOf(parseSessionKey(sessionKey));
  } catch {
    return null;
  }
}
