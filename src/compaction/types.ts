/**
 * Shapes shared by the pure half of compaction: the plan that crosses Temporal (ids and numbers,
 * never message text), the reports, and the injected token estimator.
 */
import type { AgentMessage } from '../context/types';

/**
 * Token estimate of one message. Production passes `estimateTokens` from
 * `src/context/estimate-tokens.ts` (gpt-tokenizer × 1.2); tests pass something deterministic.
 */
export type EstimateTokens = (message: AgentMessage) => number;

/** A transcript message with the id of the entry that holds it. */
export interface PlanEntry {
  readonly id: string;
  readonly message: AgentMessage;
}

/** One chunk the summarizer sees: a contiguous run of entries, named by its first and last id. */
export interface ChunkPlan {
  readonly firstEntryId: string;
  readonly lastEntryId: string;
  readonly entryCount: number;
  /** Estimated tokens of the chunk's messages, oversized ones counted in full. */
  readonly tokens: number;
  /** Estimated tokens when oversized entries are replaced by their notes. */
  readonly tokensWithoutOversized: number;
  /** Earliest and latest message timestamps (ms since epoch) in the chunk, when messages carry them. */
  readonly fromTimestamp?: number | undefined;
  readonly toTimestamp?: number | undefined;
}

/** An entry too large to summarize (`isOversizedForSummary`) and the note that replaces it. */
export interface OversizedEntry {
  readonly entryId: string;
  readonly tokens: number;
  /** e.g. `[Large toolResult (~120K tokens) omitted from summary]`. */
  readonly note: string;
}

/**
 * The compaction plan: small and serializable, so a workflow can carry it and an activity can
 * reload the named entries from PostgreSQL (claim check).
 */
export interface CompactionPlan {
  /**
   * First entry the model keeps seeing after the summary. `null` means a hard checkpoint: nothing is
   * kept, and the writer sets the compaction entry's own id as the record's `firstKeptEntryId`.
   */
  readonly firstKeptEntryId: string | null;
  /** Chunks to summarize, oldest first; together they are every entry before `firstKeptEntryId`. */
  readonly chunks: readonly ChunkPlan[];
  readonly oversized: readonly OversizedEntry[];
  /** Estimated tokens the model saw before compaction: the entries plus the previous summary. */
  readonly tokensBefore: number;
  readonly summarizedTokens: number;
  readonly keptTokens: number;
  readonly previousSummaryTokens: number;
  readonly summarizedEntryCount: number;
  readonly keptEntryCount: number;
  /** Chunk budget used: window × adaptive ratio − summarization overhead − previous summary. */
  readonly maxChunkTokens: number;
  readonly chunkRatio: number;
}

/** How a recorded compaction ended: one shape for the row, the record, the hooks and the activities. */
export interface CompactionOutcome {
  /** `skipped`: nothing written (nothing to summarize before the kept tail, or a summary would not make the context smaller). */
  readonly status: 'succeeded' | 'skipped';
  readonly degraded: boolean;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly firstKeptEntryId: string | null;
  /** The compaction entry written (null when skipped). */
  readonly entryId: string | null;
}
