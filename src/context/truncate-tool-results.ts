import type { AgentMessage, ToolResultMessage } from './types';

/** What {@link truncateOversizedToolResults} cut. */
export interface TruncatedToolResult {
  readonly index: number;
  readonly toolCallId: string;
  readonly originalChars: number;
  readonly keptChars: number;
}

export interface TruncateToolResultsResult {
  /** The input array itself when nothing was cut. */
  readonly messages: AgentMessage[];
  readonly truncated: TruncatedToolResult[];
}

/**
 * Cuts the text of tool results longer than `maxChars` for the model, with a note saying so. The stored
 * entry keeps the full result (it is only the model's view that is cut), so nothing is lost.
 */
export function truncateOversizedToolResults(messages: AgentMessage[], maxChars: number): TruncateToolResultsResult {
  // Most turns cut nothing: one pass over remembered sizes, no copy of the window.
  if (!messages.some((message) => message.role === 'toolResult' && textChars(message) > maxChars))
    return { messages, truncated: [] };
  const truncated: TruncatedToolResult[] = [];
  const out = messages.map((message, index) => {
    if (message.role !== 'toolResult') return message;
    const total = textChars(message);
    if (total <= maxChars) return message;
    let budget = maxChars;
    const content: ToolResultMessage['content'] = [];
    for (const block of message.content) {
      if (block.type !== 'text') {
        content.push(block);
        continue;
      }
      const kept = block.text.slice(0, Math.max(0, budget));
      budget -= kept.length;
      if (kept) content.push({ type: 'text', text: kept });
    }
    content.push({
      type: 'text',
      text: `\n[Tool result truncated for the model: showing the first ${maxChars.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} characters. The full result is stored in the transcript.]`,
    });
    truncated.push({ index, toolCallId: message.toolCallId, originalChars: total, keptChars: maxChars });
    return { ...message, content };
  });
  return { messages: out, truncated };
}

/**
 * Text characters of a tool result, remembered per message object: a worker's cached window hands
 * the same objects to every turn, and messages are never changed in place.
 */
const charsOf = new WeakMap<ToolResultMessage, number>();

function textChars(message: ToolResultMessage): number {
  let total = charsOf.get(message);
  if (total === undefined) {
    total = message.content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0);
    charsOf.set(message, total);
  }
  return total;
}
