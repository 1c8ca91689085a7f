/**
 * Tool-use/result pairing repair (OpenClaw's tool-use/result pairing repair). Strict providers
 * reject a tool call that is not immediately followed by its result; Keel runs this on every
 * assembled context and after every step that drops messages.
 */
import { hasPartialStop, syntheticToolResult, toolCallsOf } from './message-parts';
import type { AgentMessage, ImageBlock, TextBlock, ToolResultMessage, UserMessage } from './types';

export interface PairingRepairResult {
  /** The repaired messages; the input array itself when nothing changed. */
  messages: AgentMessage[];
  /** Synthetic error results inserted for calls that had none. */
  added: ToolResultMessage[];
  /** Results dropped because their id was already answered earlier. */
  droppedDuplicateCount: number;
  /** Results dropped because no call of the preceding assistant message matches them. */
  droppedOrphanCount: number;
  /** True when results or displaced messages were reordered. */
  moved: boolean;
}

/**
 * Makes every tool call of an assistant message be followed directly by its results, in call order:
 * - results for this assistant's calls move right after it; other messages in its span (up to the next
 *   assistant) follow the results;
 * - a call with no result gets a synthetic error result (`isError`, toolName from the call or `unknown`);
 * - a result whose id was already answered earlier is a duplicate (first kept); a result matching no
 *   call of the preceding assistant is an orphan; both are dropped;
 * - a result with an empty tool name takes its call's name;
 * - assistants with stopReason `error`/`aborted` are skipped (their calls may be partial), so results
 *   after them count as orphans.
 * Anthropic-native `tool_result` blocks inside user messages are first turned into toolResult messages
 * (placed before the rest of that user message's content).
 */
export function repairToolUseResultPairing(messages: AgentMessage[]): PairingRepairResult {
  const normalized = normalizeNativeToolResults(messages);
  const input = normalized;
  let changed = normalized !== messages;
  const out: AgentMessage[] = [];
  const answered = new Set<string>();
  const added: ToolResultMessage[] = [];
  let droppedDuplicateCount = 0;
  let droppedOrphanCount = 0;
  let moved = false;

  let i = 0;
  while (i < input.length) {
    const message = input[i];
    if (message.role !== 'assistant') {
      if (message.role === 'toolResult') {
        // A result outside any call span cannot be sent.
        if (answered.has(message.toolCallId)) droppedDuplicateCount += 1;
        else droppedOrphanCount += 1;
        changed = true;
      } else {
        out.push(message);
      }
      i += 1;
      continue;
    }

    out.push(message);
    i += 1;
    const calls = hasPartialStop(message) ? [] : toolCallsOf(message).filter((c) => typeof c.id === 'string');
    if (calls.length === 0) continue;

    const callIds = new Set(calls.map((c) => c.id));
    const results = new Map<string, ToolResultMessage>();
    const others: AgentMessage[] = [];
    const spanStart = i;
    while (i < input.length && input[i].role !== 'assistant') {
      const m = input[i];
      if (m.role === 'toolResult') {
        if (answered.has(m.toolCallId) || results.has(m.toolCallId)) droppedDuplicateCount += 1;
        else if (callIds.has(m.toolCallId)) results.set(m.toolCallId, m);
        else droppedOrphanCount += 1;
      } else {
        others.push(m);
      }
      i += 1;
    }

    const emitted: AgentMessage[] = [];
    for (const call of calls) {
      if (answered.has(call.id)) continue; // a repeated call id: its one result was already placed
      const result = results.get(call.id);
      if (!result) {
        const synthetic = syntheticToolResult(call);
        added.push(synthetic);
        emitted.push(synthetic);
      } else if (!result.toolName || !result.toolName.trim()) {
        emitted.push({ ...result, toolName: syntheticToolResult(call).toolName });
      } else {
        emitted.push(result);
      }
      answered.add(call.id);
    }
    emitted.push(...others);

    const span = input.slice(spanStart, i);
    if (!sameSequence(span, emitted)) {
      changed = true;
      const kept = new Set(emitted);
      const original = new Set(span);
      if (
        !sameSequence(
          span.filter((m) => kept.has(m)),
          emitted.filter((m) => original.has(m)),
        )
      )
        moved = true;
    }
    out.push(...emitted);
  }

  return { messages: changed ? out : messages, added, droppedDuplicateCount, droppedOrphanCount, moved };
}

/** Anthropic-native result block as found inside imported user messages. */
interface NativeToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}

export function isNativeToolResult(block: unknown): block is NativeToolResultBlock {
  return !!block && typeof block === 'object' && (block as { type?: unknown }).type === 'tool_result';
}

/** Splits user messages carrying `tool_result` blocks into toolResult messages plus the remaining user content. */
export function normalizeNativeToolResults(messages: AgentMessage[]): AgentMessage[] {
  if (!messages.some((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some(isNativeToolResult))) {
    return messages;
  }
  const out: AgentMessage[] = [];
  for (const message of messages) {
    if (message.role !== 'user' || !Array.isArray(message.content) || !message.content.some(isNativeToolResult)) {
      out.push(message);
      continue;
    }
    const rest: UserMessage['content'] = [];
    for (const block of message.content as unknown[]) {
      if (isNativeToolResult(block)) {
        out.push({
          role: 'toolResult',
          toolCallId: typeof block.tool_use_id === 'string' ? block.tool_use_id : '',
          toolName: '', // filled from the matching call by the pairing walk
          content: typeof block.content === 'string' ? [{ type: 'text', text: block.content }] : (block.content ?? []),
          isError: block.is_error === true,
          ...(message.timestamp !== undefined ? { timestamp: message.timestamp } : {}),
        });
      } else {
        rest.push(block as TextBlock | ImageBlock);
      }
    }
    if (rest.length > 0) out.push({ ...message, content: rest });
  }
  return out;
}

function sameSequence(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, k) => x === b[k]);
}
