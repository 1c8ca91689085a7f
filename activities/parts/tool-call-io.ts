/**
 * Reading one tool call with the arguments the model produced, and storing its result entry: shared
 * by the tool activity and the steps the session workflow runs itself (`sessions_spawn`).
 */
import type { ActivityDeps } from '../../src/runtime/deps';
import { getEntry } from '../../src/store/entries-repo';
import { appendToolResultReleasingArgs, loadPendingToolArgs } from '../../src/store/pending-tool-args-repo';
import {
  isToolCallBlock,
  type MessageEntry,
  type ToolCallBlock,
  type ToolResultMessage,
} from '../../src/context/types';
import type { ToolOutput } from '../../src/tools/registry';
import { logRedactions } from './model-call-report';

/** Where a tool call is and where its result goes. */
export interface ToolCallRef {
  readonly agentId: string;
  readonly sessionId: string;
  readonly assistantEntryId: string;
  readonly toolCallId: string;
  /** Deterministic id of the toolResult entry. */
  readonly resultEntryId: string;
  readonly parentId: string;
  readonly now: string;
}

/** The stored result of this call, when an earlier attempt wrote it. */
export async function storedToolResult(
  deps: ActivityDeps,
  ref: ToolCallRef,
): Promise<{ entryId: string; isError: boolean } | undefined> {
  const done = await getEntry(deps.db, ref.agentId, ref.sessionId, ref.resultEntryId);
  if (!done) return undefined;
  const message = done.type === 'message' ? done.payload.message : undefined;
  return { entryId: done.id, isError: message?.role === 'toolResult' && Boolean(message.isError) };
}

/**
 * The call with exactly what the model sent. No pending row: a call stored before raw arguments
 * were kept, so the stored (redacted) arguments are all there is.
 */
export async function loadToolCall(deps: ActivityDeps, ref: ToolCallRef): Promise<ToolCallBlock | undefined> {
  const assistant = await getEntry(deps.db, ref.agentId, ref.sessionId, ref.assistantEntryId);
  const message =
    assistant?.type === 'message' && assistant.payload.message.role === 'assistant'
      ? assistant.payload.message
      : undefined;
  const stored = message?.content.find(
    (b): b is ToolCallBlock => isToolCallBlock(b) && (b as ToolCallBlock).id === ref.toolCallId,
  );
  if (!stored) return undefined;
  const raw = await loadPendingToolArgs(deps.db, ref.agentId, ref.sessionId, ref.assistantEntryId, ref.toolCallId);
  return raw ? { ...stored, arguments: raw } : stored;
}

/** Stores the call's result entry redacted (tool output is where secrets appear) and releases its raw arguments. */
export async function storeToolResult(
  deps: ActivityDeps,
  ref: ToolCallRef,
  toolName: string,
  output: ToolOutput,
): Promise<{ entryId: string; isError: boolean }> {
  const result: ToolResultMessage = {
    role: 'toolResult',
    toolCallId: ref.toolCallId,
    toolName,
    content: output.content,
    isError: output.isError ?? false,
    ...(output.details !== undefined ? { details: output.details } : {}),
    timestamp: Date.parse(ref.now),
  };
  const entry: MessageEntry = {
    type: 'message',
    id: ref.resultEntryId,
    parentId: ref.parentId,
    timestamp: ref.now,
    message: result,
  };
  const { redactions } = await appendToolResultReleasingArgs(deps.db, ref.agentId, ref.sessionId, ref, {
    entry,
    tokenEstimate: deps.estimate(result),
  });
  logRedactions('tool_result', redactions, { toolName, toolCallId: ref.toolCallId });
  return { entryId: entry.id, isError: result.isError ?? false };
}

export function errorOutput(text: string): ToolOutput {
  return { content: [{ type: 'text', text }], isError: true };
}

export function textOutput(text: string): ToolOutput {
  return { content: [{ type: 'text', text }] };
}
