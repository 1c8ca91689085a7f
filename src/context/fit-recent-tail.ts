import type { AgentMessage } from './types';

/**
 * The most recent messages whose estimates fit `budget`, starting at a user message so the tail is a
 * valid conversation (no tool result whose call was cut off, no leading assistant turn). Empty when
 * not even the last user turn fits. Returns the same array when everything fits.
 *
 * @example fitRecentTail(messages, 8_000, estimate) // the last turns within 8k tokens
 */
export function fitRecentTail(
  messages: AgentMessage[],
  budget: number,
  estimate: (m: AgentMessage) => number,
): AgentMessage[] {
  let used = 0;
  let start = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    used += estimate(messages[i]!);
    if (used > budget) break;
    start = i;
  }
  while (start < messages.length && messages[start]!.role !== 'user') start++;
  return start === 0 ? messages : messages.slice(start);
}
