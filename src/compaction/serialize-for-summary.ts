/**
 * Rendering messages as plain text for a summarizer. Text, not chat turns, so the summarizer
 * describes the conversation instead of continuing it.
 */
import { isToolCallBlock, toolCallArguments, type AgentMessage } from '../context/types';
import type { OversizedEntry, PlanEntry } from './types';
import { itemTime } from './summary-items';

/** Tool-call arguments longer than this are shortened: the summary needs what was done, not payloads. */
const MAX_TOOL_ARGUMENT_CHARS = 2_000;

export interface SerializeOptions {
  /** A note that stands in for a message (an oversized one), by index in `messages`. */
  readonly noteFor?: ((message: AgentMessage, index: number) => string | undefined) | undefined;
  /** Prefix each message with its UTC time (`[2026-03-04 14:10] `), so a summary can quote when something was said. */
  readonly withTimes?: boolean | undefined;
}

/**
 * The text a summarizer (or the extractive summary) may see of one message: user and assistant
 * text, tool-call names and arguments, tool-result text. Never thinking, never tool-result
 * `details`, never image data.
 */
export function messageText(message: AgentMessage): string {
  switch (message.role) {
    case 'user':
      if (typeof message.content === 'string') return message.content;
      return message.content.map((b) => (b.type === 'text' ? b.text : '[image]')).join('\n');
    case 'assistant':
      return message.content
        .map((b) => {
          if (b.type === 'text') return b.text;
          if (isToolCallBlock(b)) return `${b.name}(${JSON.stringify(toolCallArguments(b) ?? {})})`;
          return '';
        })
        .filter((t) => t.length > 0)
        .join('\n');
    case 'toolResult':
      return message.content.map((b) => (b.type === 'text' ? b.text : '[image]')).join('\n');
  }
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} chars cut]`;
}

function render(message: AgentMessage): string {
  switch (message.role) {
    case 'user':
      return `[User]: ${messageText(message)}`;
    case 'assistant': {
      const lines: string[] = [];
      for (const b of message.content) {
        if (b.type === 'text' && b.text.trim()) lines.push(`[Assistant]: ${b.text}`);
        else if (isToolCallBlock(b)) {
          lines.push(
            `[Assistant tool call ${b.name}]: ${shorten(JSON.stringify(toolCallArguments(b) ?? {}), MAX_TOOL_ARGUMENT_CHARS)}`,
          );
        }
      }
      return lines.join('\n');
    }
    case 'toolResult':
      return `[Tool result ${message.toolName}${message.isError ? ' (error)' : ''}]: ${messageText(message)}`;
  }
}

/**
 * Renders messages as one text for the summarizer, a block per message, oldest first.
 * Messages with a note (oversized ones) are replaced by it; empty messages (thinking only) vanish.
 *
 * @example serializeForSummary(msgs, { noteFor: (_m, i) => notes.get(i) })
 */
export function serializeForSummary(messages: readonly AgentMessage[], options: SerializeOptions = {}): string {
  const blocks: string[] = [];
  messages.forEach((message, index) => {
    const note = options.noteFor?.(message, index);
    const text = note ?? render(message);
    if (!text) return;
    blocks.push(
      options.withTimes && message.timestamp !== undefined ? `[${itemTime(message.timestamp)}] ${text}` : text,
    );
  });
  return blocks.join('\n\n');
}

/**
 * Renders a planned chunk's entries (reloaded by id) for the summarizer, each with its time.
 * `withoutOversized` replaces the plan's oversized entries by their notes (the fallback chain's second step).
 */
export function serializeEntriesForSummary(
  entries: readonly PlanEntry[],
  oversized: readonly OversizedEntry[],
  mode: 'full' | 'withoutOversized',
): string {
  const notes = new Map(oversized.map((o) => [o.entryId, o.note]));
  return serializeForSummary(
    entries.map((e) => e.message),
    { noteFor: mode === 'full' ? undefined : (_m, i) => notes.get(entries[i].id), withTimes: true },
  );
}
