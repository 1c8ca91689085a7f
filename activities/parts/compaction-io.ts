/**
 * The inputs and results of the compaction activities: the workflow passes ids, entry ranges and
 * summaries, never the transcript.
 */
import type { IdentifierPolicy } from '../../src/compaction/identifiers';
import type { CompactionOutcome, CompactionPlan, OversizedEntry } from '../../src/compaction/types';
import type { CompactionTriggerName } from '../../src/protocol';

/** Identifies the session and the compaction on every call (and every log line). */
export interface CompactionRef {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly compactionId: string;
  /** Another model than the agent's summarizer (`keel compactions rerun --model`). */
  readonly summarizerModel?: string;
}

/** `recordCompactionStart`: the attempt to record, and what it edits when an operator asked. */
export interface RecordCompactionStartInput extends CompactionRef {
  readonly trigger: CompactionTriggerName;
  readonly retryOf: string | null;
  readonly workflowId: string;
  readonly now: string;
  /** What the memory flush before it did (`ran`, `skipped: …`, `failed: …`). */
  readonly memoryFlush?: string;
  readonly revertOf?: string;
  readonly rerunOf?: string;
}

/** A compaction that an earlier run with the same id already recorded (the workflow returns it as is). */
export interface RecordedCompaction extends CompactionOutcome {
  /** True when the row already said so; false when only the entry was written (the run died before marking it). */
  readonly rowFinished: boolean;
}

/** `planCompaction`: the window Keel was told and the recent tail to keep. */
export interface PlanCompactionInput extends CompactionRef {
  readonly contextWindowTokens: number;
  readonly trigger: CompactionTriggerName;
  /** The recent tail asked for; unset: the trigger's default (`keptTailTokens`). 0: a hard checkpoint. */
  readonly keepRecentTokens?: number;
}

/** What `planCompaction` and `planRerun` return to the workflow. */
export interface PlanCompactionResult {
  /** Ids and numbers (oversized notes are one line each). */
  readonly plan: CompactionPlan;
  /** The last compaction's summary, re-distilled with the new entries (bounded by the summary cap). */
  readonly previousSummary?: string;
  /** `extractive` when no model is configured for summaries, or the summarizer spend limit is reached. */
  readonly summarizer: 'model' | 'extractive';
  /** The compaction entry the planned window started from (null: none yet); absent from plans recorded before it. */
  readonly windowOf?: string | null;
}

/** `planRerun`: the earlier compaction to summarize again, and whether the rerun replaces it. */
export interface PlanRerunInput extends CompactionRef {
  readonly rerunOf: string;
  readonly apply: boolean;
  readonly contextWindowTokens: number;
}

/** What `planRerun` returns: a plan, and the entry whose range it covers. */
export interface PlanRerunResult extends PlanCompactionResult {
  /** The compaction entry whose range is summarized again (the applied rerun's `rangeOf`). */
  readonly rangeOf: string;
}

/** `revertCompaction`: the compaction whose earlier window comes back. */
export interface RevertCompactionInput extends CompactionRef {
  readonly revertOf: string;
  readonly now: string;
}

/** `storeRerunSummary`: a rerun's summary, kept on its row when it is not applied. */
export interface StoreRerunSummaryInput extends CompactionRef {
  readonly summary: string;
  /** Tokens of the tail the original kept (what the context would be with this summary). */
  readonly keptTokens: number;
}

/** A planned range of entries, named by its first and last entry. */
export interface EntryRange {
  readonly firstEntryId: string;
  readonly lastEntryId: string;
}

/** `summarizeChunk`: one planned chunk by its entry range, and how it is serialized. */
export interface SummarizeChunkInput extends CompactionRef, EntryRange {
  readonly mode: 'full' | 'withoutOversized';
  readonly oversized: readonly OversizedEntry[];
  readonly previousSummary?: string;
  readonly instructions: string;
}

/** `summarizeOnCache`: the whole planned range, asked on the conversation's prompt cache. */
export interface SummarizeOnCacheInput extends CompactionRef, EntryRange {
  readonly previousSummary?: string;
  /** The chunk instructions (`chunkSummaryInstructions`): the same sections and rules as a chunk's summary. */
  readonly instructions: string;
}

/** `summarizeText`: the merge of partial summaries. */
export interface SummarizeTextInput extends CompactionRef {
  /** Partial summaries to merge (bounded by the summary cap each). */
  readonly text: string;
  readonly previousSummary?: string;
  readonly instructions: string;
}

/** `reviseSummary`: the quality guard's one retry, with what the summary lost. */
export interface ReviseSummaryInput extends CompactionRef {
  readonly summary: string;
  /** Identifiers the summary lost. */
  readonly missing: readonly string[];
  /** Decisions and instructions (`[time] speaker: statement`) the summary did not quote. */
  readonly unkept?: readonly string[];
  readonly identifierPolicy: IdentifierPolicy;
}

/** The plan's estimate of the summarized messages: the summary's budget grows with it (absent in older histories). */
export interface SummaryBudgetInput {
  readonly summarizedTokens?: number;
}

/** `guardSummary`: a summary to check against the planned range it summarizes. */
export interface GuardSummaryInput extends CompactionRef, EntryRange, SummaryBudgetInput {
  readonly summary: string;
  readonly previousSummary?: string;
  readonly identifierPolicy: IdentifierPolicy;
}

/** What the guard made of a summary. */
export interface GuardSummaryResult {
  /** The summary with still-missing identifiers appended and the cap applied. */
  readonly summary: string;
  readonly missing: string[];
  /** Decisions and instructions the summary did not quote (the guard added them); absent in results recorded before it existed. */
  readonly unkept?: string[];
  readonly blank: boolean;
}

/** `extractiveSummary`: the planned range to summarize without a model. */
export interface ExtractiveSummaryInput extends CompactionRef, EntryRange, SummaryBudgetInput {
  readonly previousSummary?: string;
  readonly identifierPolicy: IdentifierPolicy;
}

/** `writeCompactionRecord`: the summary and the plan figures the entry and counters take. */
export interface WriteCompactionRecordInput extends CompactionRef {
  readonly summary: string;
  readonly firstKeptEntryId: string | null;
  readonly tokensBefore: number;
  /** Estimated tokens of the kept tail (from the plan). */
  readonly keptTokens: number;
  readonly now: string;
  /** An applied rerun: the compaction it summarized again and the entry whose range it covers. */
  readonly lineage?: { readonly rerunOf: string; readonly rangeOf: string };
  /** The session's system prompt, workspace files and tools (`CompactionWorkflowInput.promptOverheadTokens`). */
  readonly promptOverheadTokens?: number;
  /** A compaction inside a running turn (`CompactionWorkflowInput.turnInProgress`): its task is carried verbatim when summarized. */
  readonly turnInProgress?: { readonly userEntryId: string };
  /**
   * The compaction entry the plan's window started from: when another compaction was written since
   * (a provider's, while this one ran beside the session), nothing is written, so no two summaries
   * cover the same entries.
   */
  readonly windowOf?: string | null;
}

/** What `writeCompactionRecord` wrote (or would have, had it reclaimed tokens). */
export interface WriteCompactionRecordResult {
  /** Null: nothing written, because the summary and the kept tail would not be smaller than what they replace. */
  readonly entryId: string | null;
  readonly inserted: boolean;
  readonly tokensAfter: number;
  /** Nothing written: another compaction replaced the planned window first (`windowOf`). */
  readonly superseded?: true;
}

/** `finishCompaction`: the outcome the row is marked with. */
export interface FinishCompactionInput extends CompactionRef, CompactionOutcome {
  readonly trigger: CompactionTriggerName;
  readonly now: string;
  /** Why the summary is extractive (each failed summarizer attempt's real cause), kept in the row's `error`. */
  readonly extractiveBecause?: string;
}

/** `failCompaction`: why the compaction failed. */
export interface FailCompactionInput extends CompactionRef {
  readonly error: string;
  readonly now: string;
}
