/**
 * One model call of a turn, step by step: a reply an earlier attempt stored is answered as stored;
 * otherwise the call is prepared (system prompt, context within the window), checked against the
 * budget, made (streaming, the reply held until stored), and its reply stored; the turn's final
 * reply is stored with the turn's usage in one statement, and the context engine's afterTurn sees it.
 */
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { thinkingPlan } from '../../src/model/thinking-plan';
import type { ThinkingLevel } from '../../src/turn/thinking-level';
import type { ActivityDeps } from '../../src/runtime/deps';
import { getEntry } from '../../src/store/entries-repo';
import { decodeEntryRowOf } from '../../src/store/entry-row';
import { getSession } from '../../src/store/sessions-repo';
import { compactionHoldLimit } from '../../src/turn/turn-decisions';
import { maxOutputTokensFor, reserveForWindow } from '../../src/context/context-window';
import {
  isToolCallBlock,
  type AgentMessage,
  type AssistantMessage,
  type MessageEntry,
  type ToolCallBlock,
} from '../../src/context/types';
import { toActivityFailure } from '../../src/model/failures';
import type { ModelResponse } from '../../src/model/model-client';
import { storableText } from '../../src/text/storable-text';
import { estimateScaleFor } from '../../src/store/model-limits-repo';
import { appendReplyKeepingToolArgs } from '../../src/store/pending-tool-args-repo';
import { appendFinalReplyRecordingUsage } from '../../src/store/final-reply-repo';
import type { ActiveWindowCache } from '../../src/store/active-window-cache';
import type {
  AgentTaskScope,
  CompactionWorkflowResult,
  TokenUsage,
  StoredModelReply,
  TurnStopReason,
} from '../../src/protocol';
import { budgetReportRequest } from '../../src/turn/run-budget';
import { openReplyStream } from '../../src/streaming/reply-publisher';
import { publishSessionEvent } from '../../src/streaming/session-events-channel';
import { addUsage, usageOfReply } from '../../src/turn/token-usage';
import { compactionHoldInput } from './compaction-hold';
import { storedMessagesFrom } from './context-engine';
import { prepareModelCall, type PreparedCall } from './prepare-model-call';
import type { TurnReplyHold } from './held-reply';
import { learnFromOverflow, learnFromUsage } from './model-window';
import { contextPruned, contextRepairs, redactionCounts } from './model-call-report';
import { finishRecordedProviderCompaction, recordProviderCompaction } from './provider-compaction';
import type { TurnContext } from './turn-context';
import { decideAfterFinish, type FinishTurnResult } from './turn-finish';

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
   * When the reply has no tool calls it is the turn's last: the call adds the turn's usage to the
   * session row with the reply, in one statement, and returns the turn's decisions.
   */
  readonly finish: TurnFinish;
  /** An application's agent task: its prompt mode and tools. */
  readonly task?: AgentTaskScope;
  /**
   * The run reached its budget: this is its last call, made with tools the model may not call and a
   * request (sent, not stored) to report where the task stands.
   */
  readonly lastCall?: TurnStopReason;
  /** This turn's thinking level (the request's), over the session's and its agent's. */
  readonly thinking?: ThinkingLevel;
}

/** What finishing a turn needs besides this call: the usage of the turn's earlier calls, and whether it refreshes freshness. */
export interface TurnFinish {
  readonly usageBefore: TokenUsage;
  /** False for system events, which must not refresh idle/daily freshness. */
  readonly touch: boolean;
}

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
export interface CallModelResult extends StoredModelReply {
  readonly kind: 'reply';
  /** The turn finished with this call (the reply has no tool calls): no finishTurn follows. */
  readonly finished?: FinishTurnResult;
}

/** A reply as the call stored it, with what the steps after the store report. */
interface StoredReply {
  readonly message: AssistantMessage;
  readonly final: boolean;
  readonly replyTokens: number;
  readonly inserted: number;
  readonly redactions: Parameters<typeof redactionCounts>[0];
  /** The session row after the turn's usage was added (a final reply stored now). */
  readonly finishedRow?: Awaited<ReturnType<typeof appendFinalReplyRecordingUsage>>['session'];
}

/** What a worker's model calls share: its deps, its copies of active windows, and the hold where a received reply waits until stored. */
interface ModelCallContext {
  readonly workerDeps: ActivityDeps;
  readonly db: ActivityDeps['db'];
  readonly windows: ActiveWindowCache;
  readonly replyHold: TurnReplyHold;
}

/**
 * The model call's steps, over the worker's deps, its copies of active windows and the hold where a
 * received reply waits until stored.
 */
export function createModelCall(workerDeps: ActivityDeps, windows: ActiveWindowCache, replyHold: TurnReplyHold) {
  const ctx: ModelCallContext = { workerDeps, db: workerDeps.db, windows, replyHold };
  return {
    modelCall: (input: CallModelInput, turn: TurnContext, held: ModelResponse | undefined) =>
      modelCall(ctx, input, turn, held),
  };
}

/**
 * Loads the active window, calls the model and stores its reply under the given id. A retry after
 * the reply was stored returns the stored reply without calling the model again. `held`: the reply
 * an earlier attempt received and could not store; it is stored now, and the model is not called again.
 */
async function modelCall(
  ctx: ModelCallContext,
  input: CallModelInput,
  turn: TurnContext,
  held: ModelResponse | undefined,
): Promise<ModelCallOutcome> {
  const stored = turn.replyAbsent ? undefined : await storedOutcome(ctx, input, turn);
  if (stored) return stored;
  const call = await prepareModelCall(
    turn.deps,
    { ...input, model: turn.model, session: turn.session, window: turn.window },
    ctx.windows,
  );
  if (!held && input.precheck && overBudget(ctx, turn, call)) return overBudgetResult(call);
  const calledAt = performance.now();
  const reply = held ?? (await requestReply(ctx, input, turn, call, calledAt));
  const modelMs = Math.round(performance.now() - calledAt);
  if (reply.compaction) return providerCompacted(ctx, input, turn, call, reply, modelMs);
  const window = (await raisedWindow(ctx, input, turn, call, reply)) ?? call.context.window;
  const saved = await storeReply(ctx, input, turn, call, reply);
  ctx.replyHold.release(input.assistantEntryId);
  report(ctx, input, turn, call, reply, saved, modelMs, held !== undefined);
  // The turn's last model call (no tool calls): the engine's afterTurn sees what the model saw plus the reply.
  if (saved.inserted > 0 && saved.final) {
    const engine = call.context.engineInstance;
    await engine.afterTurn({
      sessionId: input.sessionId,
      sessionKey: input.sessionKey,
      messages: [...call.context.messages, saved.message],
      contextTokens: call.contextTokens + saved.replyTokens,
    });
    // The turn's stored messages reach the engine after the reply has gone back, before its next assemble.
    engine.ingestLater({ sessionId: input.sessionId, sessionKey: input.sessionKey }, (fromSeq) =>
      storedMessagesFrom(ctx.db, input.agentId, input.sessionId, fromSeq),
    );
    // A system event's answer (a subagent's report, …) is what the session says unasked: wake its event streams.
    if (!input.finish.touch) await publishSessionEvent(ctx.db, input, (m, f) => log.warn(m, f));
  }
  if (saved.inserted === 0) {
    const landed = await landedEarlier(ctx, input, turn, call, saved, window);
    if (landed) return landed;
  }
  const result = {
    ...describeReply(replyEntry(input, saved.message), call.contextTokens + saved.replyTokens),
    split: call.split,
    contextWindow: window,
  };
  return saved.finishedRow
    ? {
        ...result,
        finished: decideAfterFinish(turn, saved.finishedRow, call.contextTokens + saved.replyTokens, window),
      }
    : result;
}

/** A retry after this call's reply (or the provider's compaction) was stored: answered as stored. */
async function storedOutcome(
  ctx: ModelCallContext,
  input: CallModelInput,
  turn: TurnContext,
): Promise<ModelCallOutcome | undefined> {
  const stored = await getEntry(ctx.db, input.agentId, input.sessionId, input.assistantEntryId);
  if (!stored) return undefined;
  ctx.replyHold.release(input.assistantEntryId);
  if (stored.type === 'compaction') {
    return {
      kind: 'compacted',
      compaction: await finishRecordedProviderCompaction(turn.deps, input, stored.payload),
    };
  }
  // The attempt that stored a final reply also counted the turn.
  const reply = describeReply(decodeEntryRowOf('message', stored).payload, stored.token_estimate ?? 0);
  return reply.toolCalls.length === 0 ? { ...reply, finished: finishedEarlier(turn, turn.window) } : reply;
}

/** The context no longer fits; after a low-yield compaction the check waits as threshold compaction does (no storm). */
function overBudget(ctx: ModelCallContext, turn: TurnContext, call: PreparedCall): boolean {
  const { context } = call;
  if (context.estimatedTokens <= context.budget) return false;
  const hold = compactionHoldLimit(
    compactionHoldInput(turn.session, turn.deps.config, context.window),
    reserveForWindow(context.window, turn.deps.config),
  );
  return hold === undefined || call.contextTokens >= hold;
}

/** The model call itself, streaming the reply to the client; the reply is held until stored. */
async function requestReply(
  ctx: ModelCallContext,
  input: CallModelInput,
  turn: TurnContext,
  call: PreparedCall,
  calledAt: number,
): Promise<ModelResponse> {
  const { deps, model } = turn;
  const window = call.context.window;
  const plan = thinkingPlan(
    input.thinking ?? turn.thinking,
    maxOutputTokensFor(window, deps.config),
    reserveForWindow(window, deps.config),
  );
  if ('problem' in plan)
    throw ApplicationFailure.create({ type: 'ThinkingBudgetTooSmall', nonRetryable: true, message: plan.problem });
  const stream = openReplyStream(ctx.db, {
    ...input,
    call: input.assistantEntryId,
    attempt: Context.current().info.attempt,
    warn: (m, f) => log.warn(m, f),
  });
  let reply;
  try {
    reply = await deps.model.complete(
      {
        model,
        system: call.system,
        messages: input.lastCall ? withReportRequest(call.context.messages, input.lastCall) : call.context.messages,
        maxTokens: plan.maxTokens,
        ...(plan.thinking ? { thinking: plan.thinking } : {}),
        tools: call.tools,
        ...(input.lastCall ? { toolChoice: 'none' as const } : {}),
        promptCaching: deps.config.promptCaching,
        ...(call.context.contextManagement ? { contextManagement: call.context.contextManagement } : {}),
        ...(call.context.providerCompaction ? { providerCompaction: call.context.providerCompaction } : {}),
      },
      {
        signal: Context.current().cancellationSignal,
        ...(stream ? { onText: stream.push } : {}),
      },
    );
  } catch (err) {
    stream?.stop();
    turn.metrics?.modelCall(input.agentId, (performance.now() - calledAt) / 1000, 'error');
    // The provider's real limit is lower than Keel's window: remember it, so the compaction that
    // answers this overflow (and every later call) plans within it.
    await learnFromOverflow(deps, model, err, call.contextTokens, {
      agentId: input.agentId,
      sessionKey: input.sessionKey,
    }).catch(() => undefined);
    throw toActivityFailure(err);
  }
  // Held before the steps that write (the stream's end among them): their failure must not bill the call again.
  ctx.replyHold.hold(input.assistantEntryId, reply);
  await stream?.finish();
  return reply;
}

/** The reply is the provider's compaction block alone (its usage is the compaction's, reported apart): recorded as a compaction. */
async function providerCompacted(
  ctx: ModelCallContext,
  input: CallModelInput,
  turn: TurnContext,
  call: PreparedCall,
  reply: ModelResponse,
  modelMs: number,
): Promise<ModelCallOutcome> {
  turn.metrics?.modelCall(input.agentId, modelMs / 1000, 'ok');
  log.info('model_call', {
    event: 'model_call',
    model: turn.model,
    modelMs,
    contextTokens: call.contextTokens,
    budget: call.context.budget,
    stopReason: reply.stopReason,
    contextEdits: reply.appliedEdits ?? [],
    compactionUsage: reply.compactionUsage,
  });
  const compaction = await recordProviderCompaction(
    turn.deps,
    {
      ...input,
      tokensBefore: call.contextTokens,
      ...(reply.compactionUsage ? { usage: reply.compactionUsage } : {}),
    },
    reply.compaction!,
  );
  ctx.replyHold.release(input.assistantEntryId);
  // The provider's compaction failed: Keel's own compaction (and its extractive fallback) takes over.
  if (!compaction) return overBudgetResult(call);
  return { kind: 'compacted', compaction };
}

/**
 * A session whose estimate once fell short measures it again on every large prompt (rarely a write);
 * a raised scale is the window the turn's after-turn decisions and status use.
 */
async function raisedWindow(
  ctx: ModelCallContext,
  input: CallModelInput,
  turn: TurnContext,
  call: PreparedCall,
  reply: ModelResponse,
): Promise<number | undefined> {
  const estimateScale = estimateScaleFor(turn.session, turn.model);
  if (estimateScale === undefined) return undefined;
  const session = {
    model: turn.model,
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    estimateScale,
  };
  return learnFromUsage(turn.deps, session, {
    estimatedPromptTokens: call.contextTokens,
    budget: call.context.budget,
    reply,
  }).catch(
    (err: unknown) =>
      void log.warn('could not record the estimate scale a reply measured', {
        sessionKey: input.sessionKey,
        error: String(err),
      }),
  );
}

/**
 * Stored redacted; the tool calls' raw arguments wait in pending_tool_args for runTool. A final
 * reply is stored with the turn's usage, in one statement.
 */
async function storeReply(
  ctx: ModelCallContext,
  input: CallModelInput,
  turn: TurnContext,
  call: PreparedCall,
  reply: ModelResponse,
): Promise<StoredReply> {
  const message: AssistantMessage = {
    role: 'assistant',
    content: reply.content,
    stopReason: reply.stopReason,
    model: reply.model,
    usage: {
      input: reply.usage.input,
      output: reply.usage.output,
      cacheRead: reply.usage.cacheRead ?? 0,
      cacheWrite: reply.usage.cacheWrite ?? 0,
      ...(reply.usage.estimated ? { estimated: true } : {}),
    },
    timestamp: Date.parse(input.now),
  };
  // The console marks the calls whose context went without tool output.
  const pruned = contextPruned(call.context, reply.appliedEdits);
  if (pruned) message.pruned = pruned;
  // The run's report at its budget: readers of the transcript (announcements, streams) say why it stopped.
  if (input.lastCall) message.runStop = { ...input.lastCall, modelCalls: input.lastCall.modelCalls + 1 };
  const item = { entry: replyEntry(input, message), tokenEstimate: turn.deps.estimate(message) };
  const final = !message.content.some((b) => isToolCallBlock(b));
  if (!final)
    return {
      message,
      final,
      replyTokens: item.tokenEstimate,
      ...(await appendReplyKeepingToolArgs(ctx.db, input.agentId, input.sessionId, item)),
    };
  const usage = addUsage(input.finish.usageBefore, usageOfReply(message.usage));
  const contextTokens = call.contextTokens + item.tokenEstimate;
  const finishing = {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    usage,
    contextTokens,
    now: new Date(input.now),
    touch: input.finish.touch,
    promptOverhead: {
      systemTokens: call.split.systemTokens,
      bootstrapTokens: call.split.bootstrapTokens,
      toolTokens: call.split.toolTokens,
    },
  };
  const { inserted, redactions, session } = await appendFinalReplyRecordingUsage(
    ctx.db,
    input.sessionId,
    item,
    finishing,
  );
  return {
    message,
    final,
    replyTokens: item.tokenEstimate,
    inserted,
    redactions,
    ...(session ? { finishedRow: session } : {}),
  };
}

/** Metrics and the `model_call` line: what shaped this call, why it was slow, what the pipeline repaired, truncated and redacted. */
function report(
  ctx: ModelCallContext,
  input: CallModelInput,
  turn: TurnContext,
  call: PreparedCall,
  reply: ModelResponse,
  saved: StoredReply,
  modelMs: number,
  held: boolean,
): void {
  const { context } = call;
  const repairs = contextRepairs(context);
  const usage = usageOfReply(reply.usage);
  turn.metrics?.modelCall(input.agentId, modelMs / 1000, 'ok');
  turn.metrics?.usage(input.agentId, usage);
  turn.metrics?.repairs(input.agentId, repairs);
  log.info('model_call', {
    event: 'model_call',
    model: turn.model,
    modelMs,
    tokens: {
      input: usage.inputTokens,
      output: usage.outputTokens,
      cache_read: usage.cacheReadTokens,
      cache_write: usage.cacheWriteTokens,
      ...(usage.estimated ? { estimated: true } : {}),
    },
    contextTokens: call.contextTokens,
    budget: context.budget,
    window: context.windowLoad,
    pipeline: context.pipelineRun,
    stopReason: reply.stopReason,
    repairs: Object.fromEntries(Object.entries(repairs).filter(([, n]) => n > 0)),
    truncated: context.truncated.map((t) => ({
      toolCallId: t.toolCallId,
      originalChars: t.originalChars,
      keptChars: t.keptChars,
    })),
    redacted: redactionCounts(saved.redactions),
    ...(reply.appliedEdits ? { contextEdits: reply.appliedEdits } : {}),
    // An earlier attempt received this reply and could not store it: the model was not called again.
    ...(held ? { heldReply: true } : {}),
  });
}

/** A dead attempt's append landed first: the stored reply is the one the transcript holds (and that attempt counted the turn). */
async function landedEarlier(
  ctx: ModelCallContext,
  input: CallModelInput,
  turn: TurnContext,
  call: PreparedCall,
  saved: StoredReply,
  window: number,
): Promise<CallModelResult | undefined> {
  const winner = await getEntry(ctx.db, input.agentId, input.sessionId, input.assistantEntryId);
  if (!winner) return undefined;
  const landed = {
    ...describeReply(decodeEntryRowOf('message', winner).payload, call.contextTokens + (winner.token_estimate ?? 0)),
    split: call.split,
    contextWindow: window,
  };
  if (!saved.final) return landed;
  // That attempt counted the turn: the decisions from the row as it is now.
  const session = await getSession(ctx.db, input.agentId, input.sessionKey);
  return { ...landed, finished: finishedEarlier({ ...turn, session }, window) };
}

/** The decisions of a turn an earlier attempt finished, from the row `turn` holds. */
function finishedEarlier(turn: TurnContext, window: number): FinishTurnResult {
  return decideAfterFinish(turn, turn.session, Number(turn.session?.context_tokens ?? 0), window);
}

/** The run's last call: the conversation, then the request to report (this call's only; not stored). */
function withReportRequest(messages: readonly AgentMessage[], stop: TurnStopReason): AgentMessage[] {
  return [...messages, { role: 'user', content: budgetReportRequest(stop), timestamp: Date.now() }];
}

function overBudgetResult(call: PreparedCall): OverBudgetResult {
  return { kind: 'overBudget', estimatedTokens: call.context.estimatedTokens, budget: call.context.budget };
}

function replyEntry(input: CallModelInput, message: AssistantMessage): MessageEntry {
  return { type: 'message', id: input.assistantEntryId, parentId: input.parentId, timestamp: input.now, message };
}

/** What the workflow reads of a stored reply: its text as stored, its tool calls and its usage. */
function describeReply(entry: MessageEntry, contextTokens: number): CallModelResult {
  const message = entry.message as AssistantMessage;
  // The reply as stored: the same storable-text rule the transcript applies.
  const text = storableText(
    message.content
      .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
      .map((b) => b.text)
      .join(''),
  );
  const toolCalls = message.content
    .filter((b) => isToolCallBlock(b))
    .map((b) => ({ id: (b as ToolCallBlock).id, name: (b as ToolCallBlock).name }));
  return {
    kind: 'reply',
    entryId: entry.id,
    text,
    toolCalls,
    stopReason: message.stopReason ?? 'stop',
    usage: usageOfReply(message.usage),
    contextTokens,
  };
}
