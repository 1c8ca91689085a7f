import * as wf from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createTurnActivities, CallModelResult } from '../activities/turn-activities';
import type { createToolActivities } from '../activities/tool-activities';
import type { createMemoryActivities } from '../activities/memory-activities';
import {
  COMPACTION_WORKFLOW_TYPE,
  FailureTypes,
  compactUpdate,
  compactionWorkflowId,
  statusQuery,
  turnUpdate,
  type CompactRequest,
  type CompactionTriggerName,
  type CompactionWorkflowInput,
  type CompactionWorkflowResult,
  type SessionWorkflowInput,
  type TurnRequest,
  type TurnResult,
} from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';
import { isSilentReply } from '../src/context/silent-reply';
import { SessionState } from './session-state';
import { validateTurnRequest } from './validate-turn-request';

type TurnActivities = ReturnType<typeof createTurnActivities>;
type ToolActivities = ReturnType<typeof createToolActivities>;
type MemoryActivities = ReturnType<typeof createMemoryActivities>;

/** Short database steps: local activities (an Update + local activity costs ~12 ms, DESIGN.md). */
const db = wf.proxyLocalActivities<TurnActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', maximumInterval: '5s' },
});

/**
 * One long-lived workflow per (agentId, sessionKey). Its identity replaces OpenClaw's session write
 * lock: turns and compactions arrive as Updates and run one after the other, in arrival order.
 */
export async function sessionWorkflow(input: SessionWorkflowInput): Promise<void> {
  const state = new SessionState(input);
  const tuning = input.tuning ?? {};
  const maxTurnsPerRun = tuning.maxTurnsPerRun ?? DEFAULTS.maxTurnsPerRun;
  // Model calls stream for minutes; heartbeats notice a dead worker long before start-to-close.
  // Retryable model failures (429/529/5xx/timeouts) back off, honouring retry-after via nextRetryDelay.
  const model = wf.proxyActivities<TurnActivities & MemoryActivities>({
    startToCloseTimeout: '10m',
    heartbeatTimeout: tuning.modelHeartbeatTimeoutMs ?? 20_000,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: 8 },
  });
  // Tools are the application's: a stable idempotency key per call, and Temporal's retries.
  const tools = wf.proxyActivities<ToolActivities>({
    startToCloseTimeout: '10m',
    heartbeatTimeout: tuning.toolHeartbeatTimeoutMs ?? 60_000,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 5 },
  });
  const ids = { agentId: input.agentId, sessionKey: input.sessionKey };
  const now = () => new Date().toISOString();

  /** Memory flush (once per compaction cycle, decided by the activity) then the compaction child. */
  async function compact(sessionId: string, trigger: CompactionTriggerName, request: CompactRequest = {}): Promise<CompactionWorkflowResult | undefined> {
    await model.memoryFlush({ ...ids, sessionId, flushId: wf.uuid4(), now: now() });
    const compactionInput: CompactionWorkflowInput = {
      ...ids,
      sessionId,
      trigger,
      compactionId: wf.uuid4(),
      contextWindowTokens: state.contextWindow,
      ...keepRecent(trigger, request.keepRecentTokens, state.contextWindow),
      ...(request.instructions ? { instructions: request.instructions } : {}),
      ...(tuning.summarizeHeartbeatTimeoutMs ? { summarizeHeartbeatTimeoutMs: tuning.summarizeHeartbeatTimeoutMs } : {}),
    };
    try {
      const result = await wf.executeChild<(i: CompactionWorkflowInput) => Promise<CompactionWorkflowResult>>(COMPACTION_WORKFLOW_TYPE, {
        workflowId: compactionWorkflowId(input.agentId, input.sessionKey),
        args: [compactionInput],
      });
      state.recordCompaction(result);
      return result;
    } catch (err) {
      // An operator-started compaction of this session is running: it covers this one.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
      if (trigger === 'overflow' || trigger === 'manual') throw err;
      wf.log.warn('threshold compaction failed; the turn succeeded', { sessionKey: input.sessionKey, error: String(err) });
      return undefined;
    }
  }

  /** A model call; an overflow is answered by compacting and retrying once (OpenClaw). */
  async function callModelWithRecovery(sessionId: string, parentId: string, turnState: { compacted: boolean }): Promise<CallModelResult> {
    for (;;) {
      let r;
      try {
        r = await model.callModel({ ...ids, sessionId, assistantEntryId: wf.uuid4(), parentId, now: now(), precheck: !turnState.compacted });
      } catch (err) {
        if (!isOverflow(err)) throw err;
        if (turnState.compacted) {
          throw wf.ApplicationFailure.nonRetryable(
            'the model still rejected the prompt as too long after compacting once; the user message is stored, nothing was lost — reduce tool output or the context window',
            FailureTypes.ContextOverflowAfterCompaction,
          );
        }
        turnState.compacted = true;
        await compact(sessionId, 'overflow');
        continue;
      }
      if (r.kind === 'reply') return r;
      // Mid-turn precheck: the context no longer fits; compact and continue the same turn.
      turnState.compacted = true;
      await compact(sessionId, 'threshold');
    }
  }

  async function runTurn(request: TurnRequest): Promise<TurnResult> {
    const userEntryId = wf.uuid4();
    const begin = await db.beginTurn({
      ...ids,
      userEntryId,
      text: request.text,
      now: now(),
      newSessionId: wf.uuid4(),
      ...(request.event ? { event: request.event } : {}),
    });
    const { sessionId } = begin;
    if (begin.resetOnly) {
      // A bare /new or /reset: the new session starts with the next message.
      return { reply: 'Started a new session.', silent: false, userEntryId: '', assistantEntryId: '', turn: state.turnsCompleted, usage: { inputTokens: 0, outputTokens: 0 }, modelCalls: 0 };
    }
    const turnState = { compacted: false };
    if (begin.preflightCompaction) {
      turnState.compacted = true;
      await compact(sessionId, 'preflight');
    }
    let parentId = userEntryId;
    let inputTokens = 0;
    let outputTokens = 0;
    let modelCalls = 0;
    let reply: CallModelResult | undefined;
    while (modelCalls < DEFAULTS.maxModelCallsPerTurn) {
      reply = await callModelWithRecovery(sessionId, parentId, turnState);
      modelCalls++;
      inputTokens += reply.usage.inputTokens;
      outputTokens += reply.usage.outputTokens;
      parentId = reply.entryId;
      if (reply.toolCalls.length === 0) break;
      for (const call of reply.toolCalls) {
        const t = await tools.runTool({
          ...ids,
          sessionId,
          assistantEntryId: reply.entryId,
          toolCallId: call.id,
          resultEntryId: wf.uuid4(),
          parentId,
          idempotencyKey: `${wf.workflowInfo().workflowId}/${reply.entryId}/${call.id}`,
          now: now(),
        });
        parentId = t.entryId;
      }
    }
    const touch = request.event === undefined || request.event === 'user_message';
    const after = await db.finishTurn({ ...ids, inputTokens, outputTokens, contextTokens: reply!.contextTokens, now: now(), touch });
    state.recordTurn(parentId, after);
    if (after.memoryFlush && !after.compact) await model.memoryFlush({ ...ids, sessionId, flushId: wf.uuid4(), now: now() });
    // Threshold compaction runs after the reply is returned, before the next queued turn.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises -- deliberate until the session.ts rewrite lands
    if (after.compact) void state.serialize(() => compact(sessionId, 'threshold'));
    const silent = isSilentReply(reply!.text);
    return {
      reply: silent ? '' : reply!.text,
      silent,
      userEntryId,
      assistantEntryId: reply!.entryId,
      turn: state.turnsCompleted,
      usage: { inputTokens, outputTokens },
      modelCalls,
    };
  }

  wf.setHandler(turnUpdate, (request) => state.serialize(() => runTurn(request)), {
    validator: (request) => validateTurnRequest(request, state),
  });
  wf.setHandler(compactUpdate, (request) =>
    state.serialize(async () => {
      const { sessionId } = await db.beginCompaction({ ...ids, now: now(), newSessionId: wf.uuid4() });
      const result = await compact(sessionId, 'manual', request);
      if (!result) throw wf.ApplicationFailure.nonRetryable('a compaction of this session is already running; wait for it or retry it with `keel compactions retry`', FailureTypes.InvalidInput);
      return result;
    }),
  );
  wf.setHandler(statusQuery, () => state.status());

  // Continue-as-new only at a turn boundary, with every Update answered (DESIGN.md).
  await wf.condition(
    () => (wf.workflowInfo().continueAsNewSuggested || state.turnsThisRun >= maxTurnsPerRun) && state.idle() && wf.allHandlersFinished(),
  );
  // The window the worker reported rides along too: status in the new run must not fall back to the default.
  await wf.continueAsNew<typeof sessionWorkflow>({ ...input, contextWindowTokens: state.contextWindow, carried: state.carried() });
}

/**
 * The recent tail an automatic compaction keeps: Pi's 20,000 tokens, but never more than a quarter of
 * the window, or a small window would keep everything and reclaim nothing. Manual compactions keep
 * what they ask for (none: a hard checkpoint).
 */
function keepRecent(trigger: CompactionTriggerName, requested: number | undefined, contextWindow: number): { keepRecentTokens?: number } {
  if (requested !== undefined) return { keepRecentTokens: requested };
  if (trigger === 'manual') return {};
  return { keepRecentTokens: Math.min(DEFAULTS.keepRecentTokens, Math.floor(contextWindow * DEFAULTS.keepRecentMaxWindowShare)) };
}

/** The model rejected the prompt as too long (ActivityFailure caused by a ContextOverflow ApplicationFailure). */
function isOverflow(err: unknown): boolean {
  return (
    err instanceof wf.ActivityFailure &&
    err.cause instanceof wf.ApplicationFailure &&
    err.cause.type === FailureTypes.ContextOverflow
  );
}
