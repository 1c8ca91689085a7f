/**
 * Compaction planning: where to cut, what to summarize in which chunks, what is too big to send.
 * Runs in an activity (it walks the transcript); its result crosses Temporal as ids and numbers.
 */
import { summarizationOverheadTokens } from './summary-budget';
import type { AgentMessage } from '../context/types';
import { computeAdaptiveChunkRatio, isOversizedForSummary, oversizedNote } from './adaptive-chunk-ratio';
import { chunkUnitsByMaxTokens } from './split-messages';
import { groupToolBatches } from './tool-batches';
import type { ChunkPlan, CompactionPlan, EstimateTokens, OversizedEntry, PlanEntry } from './types';

export interface PlanCompactionOptions {
  readonly contextWindow: number;
  /**
   * Recent tail to keep verbatim (Pi default 20,000, `DEFAULTS.keepRecentTokens`). Unset or 0 is a
   * hard checkpoint: everything is summarized (manual `/compact` without a keep budget).
   */
  readonly keepRecentTokens?: number | undefined;
  readonly estimate: EstimateTokens;
  /** The previous compaction's summary: it is re-distilled with the new entries, so it takes chunk room. */
  readonly previousSummary?: string | undefined;
}

/**
 * Finds the first kept index: the longest suffix of whole tool batches whose tokens stay within
 * `keepRecentTokens`. Returns `entries.length` when nothing is kept.
 */
export function findCutIndex(
  messages: readonly AgentMessage[],
  keepRecentTokens: number,
  estimate: EstimateTokens,
): number {
  if (keepRecentTokens <= 0) return messages.length;
  const units = groupToolBatches(messages);
  let cut = messages.length;
  let kept = 0;
  for (let k = units.length - 1; k >= 0; k--) {
    let tokens = 0;
    for (let i = units[k].start; i < units[k].end; i++) tokens += estimate(messages[i]);
    if (kept + tokens > keepRecentTokens) break;
    kept += tokens;
    cut = units[k].start;
  }
  return cut;
}

/**
 * Plans one compaction of `entries` (the active entries since the last compaction, oldest first).
 *
 * Rules:
 * - the cut keeps a recent tail of ≤ `keepRecentTokens` and never falls inside a tool batch, so no
 *   kept tool result has its call summarized;
 * - the summarized prefix is chunked by `window × adaptive ratio − prompt overhead − previous summary`
 *   (the overhead: 4,096, at most a tenth of the window),
 *   never inside a tool batch;
 * - entries whose estimate × 1.2 exceeds half the window are listed with the note that replaces them.
 *
 * @example planCompaction(entries, { contextWindow: 200_000, keepRecentTokens: 20_000, estimate })
 */
export function planCompaction(entries: readonly PlanEntry[], options: PlanCompactionOptions): CompactionPlan {
  const { contextWindow, estimate } = options;
  const messages = entries.map((e) => e.message);
  const tokens = messages.map((m) => estimate(m));
  const previousSummaryTokens = options.previousSummary
    ? estimate({ role: 'user', content: options.previousSummary })
    : 0;

  // Each message is estimated once: the estimator may tokenize, and the walks below revisit messages.
  const tokenOf = new Map<AgentMessage, number>(messages.map((m, i) => [m, tokens[i]]));
  const cached: EstimateTokens = (m) => tokenOf.get(m) ?? estimate(m);
  const cut = findCutIndex(messages, options.keepRecentTokens ?? 0, cached);
  const summarized = messages.slice(0, cut);
  const chunkRatio = computeAdaptiveChunkRatio(summarized, contextWindow, cached);
  const maxChunkTokens = Math.max(
    1,
    Math.floor(contextWindow * chunkRatio) - summarizationOverheadTokens(contextWindow) - previousSummaryTokens,
  );

  const oversized: OversizedEntry[] = [];
  const noteTokens: number[] = [];
  for (let i = 0; i < cut; i++) {
    if (!isOversizedForSummary(messages[i], contextWindow, () => tokens[i])) continue;
    const note = oversizedNote(messages[i], tokens[i]);
    oversized.push({ entryId: entries[i].id, tokens: tokens[i], note });
    noteTokens[i] = estimate({ role: 'user', content: note });
  }

  const chunks: ChunkPlan[] = chunkUnitsByMaxTokens(summarized, maxChunkTokens, cached).map(([s, e]) => {
    let chunkTokens = 0;
    let withoutOversized = 0;
    let from: number | undefined;
    let to: number | undefined;
    for (let i = s; i < e; i++) {
      chunkTokens += tokens[i];
      withoutOversized += noteTokens[i] ?? tokens[i];
      const ts = messages[i].timestamp;
      if (typeof ts === 'number') {
        from = from === undefined ? ts : Math.min(from, ts);
        to = to === undefined ? ts : Math.max(to, ts);
      }
    }
    return {
      firstEntryId: entries[s].id,
      lastEntryId: entries[e - 1].id,
      entryCount: e - s,
      tokens: chunkTokens,
      tokensWithoutOversized: withoutOversized,
      ...(from !== undefined ? { fromTimestamp: from, toTimestamp: to } : {}),
    };
  });

  const summarizedTokens = tokens.slice(0, cut).reduce((a, b) => a + b, 0);
  const keptTokens = tokens.slice(cut).reduce((a, b) => a + b, 0);
  return {
    firstKeptEntryId: cut < entries.length ? entries[cut].id : null,
    chunks,
    oversized,
    tokensBefore: summarizedTokens + keptTokens + previousSummaryTokens,
    summarizedTokens,
    keptTokens,
    previousSummaryTokens,
    summarizedEntryCount: cut,
    keptEntryCount: entries.length - cut,
    maxChunkTokens,
    chunkRatio,
  };
}
