import { Context, log } from '@temporalio/activity';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import type { ToolCallBlock } from '../src/context/types';
import { toolCallArguments } from '../src/context/types';
import { errorOutput, loadToolCall, storeToolResult, storedToolResult } from './parts/tool-call-io';
import type { ToolOutput } from '../src/tools/registry';
import { toolRunPolicy } from '../src/tools/tool-run-policy';
import { runToolCall } from './parts/run-tool-call';
import { startHeartbeat } from './parts/heartbeat';
import { publishToolNotice } from '../src/streaming/reply-publisher';
import { RanToolOutputs, toolOutputHold, type HeldToolOutput } from './parts/held-tool-output';
import { MAX_TOOL_ERROR_CHARS } from '../src/streaming/reply-channel';

export interface RunToolInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** The turn's number in the session (log lines only). */
  readonly turn?: number;
  /**
   * The assistant entry that holds the call. The activity reads the call's raw arguments from
   * pending_tool_args (the entry holds them redacted).
   */
  readonly assistantEntryId: string;
  readonly toolCallId: string;
  /** Deterministic id of the toolResult entry this run writes. */
  readonly resultEntryId: string;
  readonly parentId: string;
  /** Stable across retries of this call, handed to the tool for deduplication. */
  readonly idempotencyKey: string;
  readonly now: string;
  /** The client request whose reply streams: it hears that the call ran (`publishToolNotice`). */
  readonly requestId?: string;
}

export interface RunToolResult {
  readonly entryId: string;
  readonly isError: boolean;
  /** An error result's reason for the turn's tool list (its first line, cut short). */
  readonly error?: string;
}

/** What the workflow asks when a tool activity failed for good: its call is answered with an error result. */
export interface StoreToolFailureInput extends RunToolInput {
  /** Why the activity failed, in words for the model. */
  readonly error: string;
}

/** What the tool activities of a worker share: its deps, and one memo of outputs run and not stored yet. */
interface ToolActivityContext {
  readonly allDeps: ActivityDeps;
  readonly outputHold: ReturnType<typeof toolOutputHold>;
}

/** Runs one registered tool for one tool call and stores its result entry, once. */
export function createToolActivities(allDeps: ActivityDeps) {
  const ctx: ToolActivityContext = {
    allDeps,
    outputHold: toolOutputHold(new RanToolOutputs(), allDeps.config.encryptionKeys !== undefined),
  };
  return {
    runTool: (input: RunToolInput) => runTool(ctx, input),
    storeToolFailure: (input: StoreToolFailureInput) => storeToolFailure(ctx, input),
  };
}

/**
 * Runs the call's tool once and stores its result. The output is held until stored, so an attempt
 * that could not store it (the database away) leaves it to the next, which stores it without
 * running the tool again.
 */
async function runTool(ctx: ToolActivityContext, input: RunToolInput): Promise<RunToolResult> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  const done = await storedToolResult(deps, input);
  if (done) return done;
  const { toolName: name, output } = ctx.outputHold.take(input.resultEntryId) ?? (await runOnce(ctx, deps, input));
  const stored = await storeToolResult(deps, input, name, output);
  ctx.outputHold.release(input.resultEntryId);
  if (input.requestId !== undefined) {
    await publishToolNotice(
      deps.db,
      { ...input, requestId: input.requestId },
      { id: input.toolCallId, name, isError: stored.isError, ...errorReason(stored.isError, output) },
      (m, f) => log.warn(m, f),
    );
  }
  return { ...stored, ...errorReason(stored.isError, output) };
}

/** Loads the call, runs its tool and holds the output until it is stored. */
async function runOnce(ctx: ToolActivityContext, deps: ActivityDeps, input: RunToolInput): Promise<HeldToolOutput> {
  const call = await loadToolCall(deps, input);
  const ran = call
    ? await execute(deps, call, input)
    : errorOutput(`tool call ${input.toolCallId} not found in entry ${input.assistantEntryId}`);
  const toolName = call?.name ?? 'unknown';
  const held = { resultEntryId: input.resultEntryId, toolName, output: storableOutput(toolName, ran) };
  ctx.outputHold.hold(held);
  return held;
}

/**
 * The error result of a call whose activity failed for good (its worker lost again and again, its
 * result unstorable): the call is answered, so the transcript stays paired. A result an attempt
 * stored first stays; an output this worker still holds is stored as it is.
 */
async function storeToolFailure(ctx: ToolActivityContext, input: StoreToolFailureInput): Promise<RunToolResult> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  const done = await storedToolResult(deps, input);
  if (done) return done;
  // The tool ran on this worker and only its writes failed: its real output, not an error.
  const held = ctx.outputHold.take(input.resultEntryId);
  if (held) {
    const stored = await storeToolResult(deps, input, held.toolName, held.output);
    ctx.outputHold.release(input.resultEntryId);
    return stored;
  }
  const call = await loadToolCall(deps, input);
  const name = call?.name ?? 'unknown';
  const output = errorOutput(`tool "${name}" did not finish: ${input.error}`);
  return { ...(await storeToolResult(deps, input, name, output)), ...errorReason(true, output) };
}

/** Unknown tools, invalid inputs, thrown errors and timeouts become error results the model can read, not crashes. */
async function execute(deps: ActivityDeps, call: ToolCallBlock, input: RunToolInput): Promise<ToolOutput> {
  const tool = deps.tools.get(call.name);
  if (!tool) {
    const known =
      deps.tools
        .list()
        .map((t) => t.name)
        .join(', ') || 'none';
    return errorOutput(`unknown tool "${call.name}"; available tools: ${known}`);
  }
  const parsed = tool.input.safeParse(toolCallArguments(call) ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
    return errorOutput(`invalid input for tool "${call.name}": ${issues}`);
  }
  const activity = Context.current();
  // Heartbeat while the tool runs and between its retries: a dead worker is noticed within the heartbeat timeout.
  const heartbeat = startHeartbeat();
  const { workspaceDir, workspaceAccess } = deps.config;
  const policy = toolRunPolicy(tool, deps.config);
  try {
    const run = await runToolCall(
      tool,
      parsed.data,
      {
        agentId: input.agentId,
        sessionKey: input.sessionKey,
        idempotencyKey: input.idempotencyKey,
        ...(workspaceDir && workspaceAccess !== 'none'
          ? { workspace: { dir: workspaceDir, access: workspaceAccess } }
          : {}),
      },
      policy,
      {
        cancellationSignal: activity.cancellationSignal,
        cancelled: activity.cancelled,
        sleep: (ms) => activity.sleep(ms),
      },
    );
    if (run.timedOut)
      log.warn('tool timed out; its run is abandoned', {
        toolName: tool.name,
        toolCallId: call.id,
        timeoutMs: policy.timeoutMs,
      });
    else if (run.output.isError)
      log.info('tool answered with an error result', {
        toolName: tool.name,
        toolCallId: call.id,
        attempts: run.attempts,
      });
    return run.output;
  } finally {
    heartbeat.stop();
  }
}

/** The output, or the error result the model reads when it cannot be stored as JSON (a BigInt, a cycle): a tool's fault, not a retry's. */
function storableOutput(toolName: string, output: ToolOutput): ToolOutput {
  try {
    JSON.stringify(output);
    return output;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return errorOutput(`tool "${toolName}" returned a result that cannot be stored: ${why}`);
  }
}

/** An error result's reason for the chat's tool line: its first line of text, cut to fit. */
function errorReason(isError: boolean, output: ToolOutput): { error?: string } {
  if (!isError) return {};
  const text = output.content
    .find((b) => b.type === 'text')
    ?.text.split('\n')[0]
    ?.trim();
  return text ? { error: text.slice(0, MAX_TOOL_ERROR_CHARS) } : {};
}
