/**
 * Small readers over message shapes shared by the repair, validation and estimate functions.
 * Kept private to `src/context/`.
 */
import { isToolCallBlock, type AssistantMessage, type ToolCallBlock, type ToolResultMessage } from './types';

/** Stop reasons whose tool calls may be partial (spec: skipped by pairing repair). */
export const PARTIAL_STOP_REASONS: ReadonlySet<string> = new Set(['error', 'aborted']);

/** The tool-call blocks of an assistant message, in order. */
export function toolCallsOf(message: AssistantMessage): ToolCallBlock[] {
  if (!Array.isArray(message.content)) return [];
  return message.content.filter((b): b is ToolCallBlock => !!b && typeof b === 'object' && isToolCallBlock(b));
}

/** True when the assistant stopped with an error or was aborted, so its tool calls may be partial. */
export function hasPartialStop(message: AssistantMessage): boolean {
  return message.stopReason !== undefined && PARTIAL_STOP_REASONS.has(message.stopReason);
}

/** True for text that a provider would treat as empty. */
export function isBlankText(text: unknown): boolean {
  return typeof text !== 'string' || text.trim().length === 0;
}

/** Builds the synthetic error result that stands in for a missing tool result. */
export function syntheticToolResult(call: Pick<ToolCallBlock, 'id' | 'name'>): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: typeof call.name === 'string' && call.name.trim() ? call.name.trim() : 'unknown',
    content: [{ type: 'text', text: MISSING_TOOL_RESULT_TEXT }],
    isError: true,
  };
}

/** Text of a synthetic result: says the result was missing and was inserted by transcript repair. */
export const MISSING_TOOL_RESULT_TEXT =
  '[keel] The result of this tool call is missing from the session history; this error result was inserted for transcript repair.';
