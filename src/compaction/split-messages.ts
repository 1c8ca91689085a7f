/**
 * Splitting a transcript into chunks for summarization, by token share or by a token ceiling.
 * Both walk whole tool batches (`groupToolBatches`), never single messages.
 */
import { DEFAULTS } from '../config/defaults';
import type { AgentMessage } from '../context/types';
import { groupToolBatches, sumTokens } from './tool-batches';
import type { EstimateTokens } from './types';

/**
 * Splits messages into at most `parts` chunks of roughly equal token share, oldest first.
 * Fewer than 4 messages (`minMessagesForSplit`) or `parts` ≤ 1 → one chunk holding the input array.
 * A boundary never falls inside a tool batch.
 */
export function splitMessagesByTokenShare(
  messages: AgentMessage[],
  options: { parts?: number; estimate: EstimateTokens },
): AgentMessage[][] {
  const parts = Math.floor(options.parts ?? DEFAULTS.defaultParts);
  if (messages.length === 0) return [];
  if (parts <= 1 || messages.length < DEFAULTS.minMessagesForSplit) return [messages];
  const units = groupToolBatches(messages);
  const unitTokens = units.map((u) => sumTokens(messages, u.start, u.end, options.estimate));
  const total = unitTokens.reduce((a, b) => a + b, 0);
  const target = total / parts;
  const chunks: AgentMessage[][] = [];
  let start = 0;
  let current = 0;
  units.forEach((unit, k) => {
    // Close the chunk before a unit that would push it past its share, keeping the last part open.
    if (unit.start > start && current + unitTokens[k] > target && chunks.length < parts - 1) {
      chunks.push(messages.slice(start, unit.start));
      start = unit.start;
      current = 0;
    }
    current += unitTokens[k];
  });
  chunks.push(messages.slice(start));
  return chunks;
}

/**
 * Splits messages into consecutive chunks of at most `maxTokens` each, oldest first, as half-open
 * `[start, end)` ranges (the planner needs ids, not copies). A tool batch larger than `maxTokens`
 * becomes a chunk of its own (it is never split).
 */
export function chunkUnitsByMaxTokens(
  messages: readonly AgentMessage[],
  maxTokens: number,
  estimate: EstimateTokens,
): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let start = 0;
  let current = 0;
  for (const unit of groupToolBatches(messages)) {
    const tokens = sumTokens(messages, unit.start, unit.end, estimate);
    if (unit.start > start && current + tokens > maxTokens) {
      ranges.push([start, unit.start]);
      start = unit.start;
      current = 0;
    }
    current += tokens;
  }
  if (messages.length > start) ranges.push([start, messages.length]);
  return ranges;
}
