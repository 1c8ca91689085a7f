/**
 * Tool batches: the units compaction may never split. Every chunk boundary and every cut point
 * falls between units, so a tool call always travels with its results.
 */
import { isToolCallBlock, type AgentMessage } from '../context/types';

/** A half-open range `[start, end)` of message indexes that must stay together. */
export interface MessageUnit {
  readonly start: number;
  readonly end: number;
}

/**
 * Groups messages into units that must stay together.
 *
 * Rules:
 * - an assistant message with tool calls opens a batch that runs to its last matching result
 *   before the next assistant message; anything in between (a displaced user turn) stays in it;
 * - a call with no result does not hold the batch open (aborted/error calls end at the assistant);
 * - a tool result never starts a unit (except at index 0): stray results attach to the unit
 *   before them, so a cut can never keep a result whose call was summarized.
 */
export function groupToolBatches(messages: readonly AgentMessage[]): MessageUnit[] {
  const units: MessageUnit[] = [];
  let i = 0;
  while (i < messages.length) {
    let last = i;
    const message = messages[i];
    if (message.role === 'assistant') {
      const callIds = new Set(message.content.filter(isToolCallBlock).map((b) => b.id));
      if (callIds.size > 0) {
        for (let j = i + 1; j < messages.length && messages[j].role !== 'assistant'; j++) {
          const m = messages[j];
          if (m.role === 'toolResult' && callIds.has(m.toolCallId)) last = j;
        }
      }
    }
    while (last + 1 < messages.length && messages[last + 1].role === 'toolResult') last++;
    units.push({ start: i, end: last + 1 });
    i = last + 1;
  }
  return units;
}

/** Sums an estimate over `messages[start, end)`. */
export function sumTokens(
  messages: readonly AgentMessage[],
  start: number,
  end: number,
  estimate: (m: AgentMessage) => number,
): number {
  let total = 0;
  for (let i = start; i < end; i++) total += estimate(messages[i]);
  return total;
}
