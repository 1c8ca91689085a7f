/**
 * Safeguard pruning (OpenClaw `pruneHistoryForContextShare`): when history exceeds its share of the
 * window, drop whole oldest chunks until it fits, and repair tool pairing after each drop.
 */
import { DEFAULTS } from '../config/defaults';
import { repairToolUseResultPairing } from '../context/repair-tool-use-result-pairing';
import type { AgentMessage } from '../context/types';
import { splitMessagesByTokenShare } from './split-messages';
import type { EstimateTokens, PruneHistoryResult } from './types';

export interface PruneHistoryOptions {
  readonly contextWindow: number;
  /** Share of the window history may use (OpenClaw `maxHistoryShare`, 0.5). */
  readonly maxHistoryShare?: number;
  /** Chunks per split (OpenClaw default parts, 2). */
  readonly parts?: number;
  readonly estimate: EstimateTokens;
}

function total(messages: readonly AgentMessage[], estimate: EstimateTokens): number {
  let sum = 0;
  for (const m of messages) sum += estimate(m);
  return sum;
}

/**
 * Drops the oldest chunk (of a `parts`-way token-share split) while history exceeds
 * `window × maxHistoryShare` and the split still yields more than one chunk; after each drop,
 * pairing repair removes results whose call was dropped. Returns the input array when nothing is dropped.
 *
 * @example pruneHistoryForContextShare(msgs, { contextWindow: 200_000, estimate }).droppedChunks
 */
export function pruneHistoryForContextShare(
  messages: AgentMessage[],
  options: PruneHistoryOptions,
): PruneHistoryResult {
  const { estimate } = options;
  const budgetTokens = Math.max(
    1,
    Math.floor(options.contextWindow * (options.maxHistoryShare ?? DEFAULTS.maxHistoryShare)),
  );
  let kept = messages;
  let keptTokens = total(kept, estimate);
  const droppedMessagesList: AgentMessage[] = [];
  let droppedChunks = 0;
  let droppedMessages = 0;
  let droppedTokens = 0;

  while (kept.length > 0 && keptTokens > budgetTokens) {
    const chunks = splitMessagesByTokenShare(kept, { parts: options.parts ?? DEFAULTS.defaultParts, estimate });
    if (chunks.length <= 1) break;
    const [dropped, ...rest] = chunks;
    const flat = rest.flat();
    const repair = repairToolUseResultPairing(flat);
    // Results removed by the repair were orphaned by this drop: count them as dropped too.
    const removed = repair.messages === flat ? [] : orphansRemoved(flat, repair.messages);
    droppedChunks += 1;
    droppedMessages += dropped.length + removed.length;
    droppedTokens += total(dropped, estimate) + total(removed, estimate);
    droppedMessagesList.push(...dropped, ...removed);
    kept = repair.messages;
    keptTokens = total(kept, estimate);
  }
  return {
    messages: kept,
    droppedMessagesList,
    droppedChunks,
    droppedMessages,
    droppedTokens,
    keptTokens,
    budgetTokens,
  };
}

/** Messages of `before` that are absent from `after` (by identity). */
function orphansRemoved(before: readonly AgentMessage[], after: readonly AgentMessage[]): AgentMessage[] {
  const present = new Set(after);
  return before.filter((m) => !present.has(m));
}
