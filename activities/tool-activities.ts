import { Context } from '@temporalio/activity';
import { depsForAgent, type ActivityDeps } from '../src/runtime/deps';
import { getEntry } from '../src/store/entries-repo';
import { appendToolResultReleasingArgs, loadPendingToolArgs } from '../src/store/pending-tool-args-repo';
import type { AssistantMessage, MessageEntry, ToolCallBlock, ToolResultMessage } from '../src/context/types';
import { isToolCallBlock, toolCallArguments } from '../src/context/types';
import type { ToolOutput } from '../src/tools/registry';
import { startHeartbeat } from './heartbeat';

export interface RunToolInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
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
  const { db } = allDeps;

  async function runTool(input: RunToolInput): Promise<RunToolResult> {
    const deps = depsForAgent(allDeps, input.agentId);
    const done = await getEntry(db, input.agentId, input.sessionId, input.resultEntryId);
    if (done) return { entryId: done.id, isError: Boolean((done.payload as unknown as MessageEntry & { message: ToolResultMessage }).message.isError) };

    const assistant = await getEntry(db, input.agentId, input.sessionId, input.assistantEntryId);
    const message = (assistant?.payload as unknown as MessageEntry | undefined)?.message as AssistantMessage | undefined;
    const stored = message?.content.find((b): b is ToolCallBlock => isToolCallBlock(b) && (b as ToolCallBlock).id === input.toolCallId);
    // The tool runs with exactly what the model sent. No pending row: a call stored before raw
    // arguments were kept, so the stored (redacted) arguments are all there is.
    const raw = stored && (await loadPendingToolArgs(db, input.agentId, input.sessionId, input.assistantEntryId, input.toolCallId));
    const call = stored && raw ? { ...stored, arguments: raw } : stored;
    const toolName = call?.name ?? 'unknown';
    const output = call ? await execute(call, input) : errorOutput(`tool call ${input.toolCallId} not found in entry ${input.assistantEntryId}`);

    const result: ToolResultMessage = {
      role: 'toolResult',
      toolCallId: input.toolCallId,
      toolName,
      content: output.content,
      isError: output.isError ?? false,
      ...(output.details !== undefined ? { details: output.details } : {}),
      timestamp: Date.parse(input.now),
    };
    const entry: MessageEntry = { type: 'message', id: input.resultEntryId, parentId: input.parentId, timestamp: input.now, message: result };
    // Tool output is where secrets usually appear: stored redacted, with the raw arguments released.
    await appendToolResultReleasingArgs(db, input.agentId, input.sessionId, input, { entry, tokenEstimate: deps.estimate(result) });
    return { entryId: entry.id, isError: result.isError ?? false };
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

function errorOutput(text: string): ToolOutput {
  return { content: [{ type: 'text', text }], isError: true };
}
