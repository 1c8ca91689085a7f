import * as wf from '@temporalio/workflow';
import type { createTurnActivities } from '../activities/turn-activities';
import type { createToolActivities } from '../activities/tool-activities';
import {
  FailureTypes,
  MAX_USER_TEXT_CHARS,
  statusQuery,
  turnUpdate,
  type SessionWorkflowInput,
  type TurnRequest,
  type TurnResult,
} from '../src/protocol';
import { SessionState } from './session-state';

type TurnActivities = ReturnType<typeof createTurnActivities>;
type ToolActivities = ReturnType<typeof createToolActivities>;

/** Short database steps: local activities (an Update + local activity costs ~12 ms, DESIGN.md). */
const db = wf.proxyLocalActivities<TurnActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', maximumInterval: '5s' },
});

/** The most tool-use rounds one turn may take before Keel stops looping (a runaway guard). */
const MAX_MODEL_CALLS_PER_TURN = 25;
/** Continue-as-new after this many turns even when Temporal does not suggest it (Updates per run are capped at 2,000). */
const MAX_TURNS_PER_RUN = 500;

/**
 * One long-lived workflow per (agentId, sessionKey). Its identity replaces OpenClaw's session write
 * lock: turns arrive as Updates and run one after the other, in arrival order.
 */
export async function sessionWorkflow(input: SessionWorkflowInput): Promise<void> {
  const state = new SessionState(input);
  const timeouts = input.tuning ?? {};
  // Model calls stream for minutes; heartbeats notice a dead worker long before start-to-close.
  const model = wf.proxyActivities<TurnActivities>({
    startToCloseTimeout: '10m',
    heartbeatTimeout: timeouts.modelHeartbeatTimeoutMs ?? 20_000,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s', maximumAttempts: 8 },
  });
  // Tools are the application's; they get a stable idempotency key and Temporal's retries.
  const tools = wf.proxyActivities<ToolActivities>({
    startToCloseTimeout: '10m',
    heartbeatTimeout: timeouts.toolHeartbeatTimeoutMs ?? 60_000,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 5 },
  });

  async function runTurn(request: TurnRequest): Promise<TurnResult> {
    const now = () => new Date().toISOString();
    const userEntryId = wf.uuid4();
    const { sessionId } = await db.beginTurn({
      agentId: input.agentId,
      sessionKey: input.sessionKey,
      userEntryId,
      text: request.text,
      now: now(),
      newSessionId: wf.uuid4(),
    });
    let parentId = userEntryId;
    let inputTokens = 0;
    let outputTokens = 0;
    let modelCalls = 0;
    let reply = '';
    let assistantEntryId = '';
    let contextTokens = 0;
    while (modelCalls < MAX_MODEL_CALLS_PER_TURN) {
      const r = await model.callModel({
        agentId: input.agentId,
        sessionKey: input.sessionKey,
        sessionId,
        assistantEntryId: wf.uuid4(),
        parentId,
        now: now(),
      });
      modelCalls++;
      inputTokens += r.usage.inputTokens;
      outputTokens += r.usage.outputTokens;
      parentId = assistantEntryId = r.entryId;
      reply = r.text;
      contextTokens = r.contextTokens;
      if (r.toolCalls.length === 0) break;
      for (const call of r.toolCalls) {
        const resultEntryId = wf.uuid4();
        const t = await tools.runTool({
          agentId: input.agentId,
          sessionKey: input.sessionKey,
          sessionId,
          assistantEntryId: r.entryId,
          toolCallId: call.id,
          resultEntryId,
          parentId,
          idempotencyKey: `${wf.workflowInfo().workflowId}/${r.entryId}/${call.id}`,
          now: now(),
        });
        parentId = t.entryId;
      }
    }
    await db.finishTurn({ agentId: input.agentId, sessionKey: input.sessionKey, inputTokens, outputTokens, contextTokens, now: now() });
    state.lastEntryId = parentId;
    state.contextTokens = contextTokens;
    const turn = ++state.turnsCompleted;
    state.turnsThisRun++;
    return { reply, silent: false, userEntryId, assistantEntryId, turn, usage: { inputTokens, outputTokens }, modelCalls };
  }

  wf.setHandler(
    turnUpdate,
    async (request) => state.serialize(() => runTurn(request)),
    {
      validator: (request) => {
        if (typeof request?.text !== 'string' || request.text.trim() === '') {
          throw wf.ApplicationFailure.nonRetryable('text: must be a non-empty string', FailureTypes.InvalidInput);
        }
        if (request.text.length > MAX_USER_TEXT_CHARS) {
          throw wf.ApplicationFailure.nonRetryable(
            `text: ${request.text.length} characters exceeds ${MAX_USER_TEXT_CHARS}; send large content as a file or tool result`,
            FailureTypes.InvalidInput,
          );
        }
        if (request.expectedLastEntryId !== undefined && state.isStale(request.expectedLastEntryId)) {
          throw wf.ApplicationFailure.nonRetryable(
            `expectedLastEntryId ${request.expectedLastEntryId} is stale: the session's last entry is ${state.lastEntryId}; reload and resend`,
            FailureTypes.StaleTurn,
          );
        }
      },
    },
  );
  wf.setHandler(statusQuery, () => state.status());

  // Continue-as-new only at a turn boundary, with every Update answered (DESIGN.md).
  await wf.condition(
    () => (wf.workflowInfo().continueAsNewSuggested || state.turnsThisRun >= MAX_TURNS_PER_RUN) && state.idle() && wf.allHandlersFinished(),
  );
  await wf.continueAsNew<typeof sessionWorkflow>({ ...input, carried: state.carried() });
}
