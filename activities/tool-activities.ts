import { Context } from '@temporalio/activity';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import type { ToolCallBlock } from '../src/context/types';
import { toolCallArguments } from '../src/context/types';
import { errorOutput, loadToolCall, storeToolResult, storedToolResult } from './tool-call-io';
import type { ToolOutput } from '../src/tools/registry';
import { startHeartbeat } from './heartbeat';

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
}

export interface RunToolResult {
  readonly entryId: string;
  readonly isError: boolean;
}

/** Runs one registered tool for one tool call and stores its result entry, once. */
export function createToolActivities(allDeps: ActivityDeps) {
  async function runTool(input: RunToolInput): Promise<RunToolResult> {
    const deps = depsForAgent(allDeps, input.agentId);
    const done = await storedToolResult(deps, input);
    if (done) return done;
    const call = await loadToolCall(deps, input);
    const output = call ? await execute(call, input) : errorOutput(`tool call ${input.toolCallId} not found in entry ${input.assistantEntryId}`);
    return storeToolResult(deps, input, call?.name ?? 'unknown', output);
  }

  /** Unknown tools and invalid inputs become error results the model can read, not crashes. */
  async function execute(call: ToolCallBlock, input: RunToolInput): Promise<ToolOutput> {
    const deps = depsForAgent(allDeps, input.agentId);
    const tool = deps.tools.get(call.name);
    if (!tool) {
      const known = deps.tools.list().map((t) => t.name).join(', ') || 'none';
      return errorOutput(`unknown tool "${call.name}"; available tools: ${known}`);
    }
    const parsed = tool.input.safeParse(toolCallArguments(call) ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
      return errorOutput(`invalid input for tool "${call.name}": ${issues}`);
    }
    const ctx = Context.current();
    // Heartbeat while the tool runs, however long: a dead worker is noticed within the heartbeat timeout.
    const heartbeat = startHeartbeat();
    const { workspaceDir, workspaceAccess } = deps.config;
    try {
      const out = await tool.run(parsed.data, {
        agentId: input.agentId,
        sessionKey: input.sessionKey,
        idempotencyKey: input.idempotencyKey,
        signal: ctx.cancellationSignal,
        ...(workspaceDir && workspaceAccess !== 'none' ? { workspace: { dir: workspaceDir, access: workspaceAccess } } : {}),
      });
      return typeof out === 'string' ? { content: [{ type: 'text', text: out }] } : out;
    } finally {
      heartbeat.stop();
    }
  }

  return { runTool };
}
