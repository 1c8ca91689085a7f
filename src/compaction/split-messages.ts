/**
 * Splitting a transcript into chunks for summarization by a token ceiling, walking whole tool
 * batches (`groupToolBatches`), never single messages.
 */
import type { AgentMessage } from '../context/types';
import { groupToolBatches, sumTokens } from './tool-batches';
import type { EstimateTokens } from './types';

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
