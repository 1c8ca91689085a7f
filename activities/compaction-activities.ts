/**
 * The compaction workflow's activities: each reads what it needs from the database by id (the
 * workflow passes ids, ranges and summaries, never the transcript), calls a pure function or the
 * summarizer model, and writes idempotently. Each lives in `parts/compaction-*.ts`, named for its step.
 */
import type { ActivityDeps } from '../src/runtime/deps';
import { ReceivedReplies } from './parts/received-replies';
import { compactionContext } from './parts/compaction-context';
import { failCompaction, finishCompaction, recordCompactionStart } from './parts/compaction-record';
import { planCompactionStep, planRerunStep } from './parts/compaction-plan';
import { reviseSummary, summarizeChunk, summarizeOnCache, summarizeText } from './parts/compaction-summarize';
import { extractiveSummaryStep, guardSummaryStep } from './parts/compaction-guard';
import { storeRerunSummaryStep, writeCompactionRecordStep } from './parts/compaction-write';
import { revertCompactionStep } from './parts/compaction-revert';
import type {
  ExtractiveSummaryInput,
  FailCompactionInput,
  FinishCompactionInput,
  GuardSummaryInput,
  PlanCompactionInput,
  PlanRerunInput,
  RecordCompactionStartInput,
  ReviseSummaryInput,
  RevertCompactionInput,
  StoreRerunSummaryInput,
  SummarizeChunkInput,
  SummarizeOnCacheInput,
  SummarizeTextInput,
  WriteCompactionRecordInput,
} from './parts/compaction-io';

/**
 * The compaction activities of a worker, by the names the workflow calls. `replies`: the worker's
 * memo of replies received and not stored yet (a summarizer retry reuses them).
 */
export function createCompactionActivities(allDeps: ActivityDeps, replies = new ReceivedReplies()) {
  const ctx = compactionContext(allDeps, replies);
  return {
    recordCompactionStart: (input: RecordCompactionStartInput) => recordCompactionStart(ctx, input),
    planCompaction: (input: PlanCompactionInput) => planCompactionStep(ctx, input),
    summarizeChunk: (input: SummarizeChunkInput) => summarizeChunk(ctx, input),
    summarizeOnCache: (input: SummarizeOnCacheInput) => summarizeOnCache(ctx, input),
    summarizeText: (input: SummarizeTextInput) => summarizeText(ctx, input),
    reviseSummary: (input: ReviseSummaryInput) => reviseSummary(ctx, input),
    guardSummary: (input: GuardSummaryInput) => guardSummaryStep(ctx, input),
    extractiveSummary: (input: ExtractiveSummaryInput) => extractiveSummaryStep(ctx, input),
    writeCompactionRecord: (input: WriteCompactionRecordInput) => writeCompactionRecordStep(ctx, input),
    planRerun: (input: PlanRerunInput) => planRerunStep(ctx, input),
    storeRerunSummary: (input: StoreRerunSummaryInput) => storeRerunSummaryStep(ctx, input),
    revertCompaction: (input: RevertCompactionInput) => revertCompactionStep(ctx, input),
    finishCompaction: (input: FinishCompactionInput) => finishCompaction(ctx, input),
    failCompaction: (input: FailCompactionInput) => failCompaction(ctx, input),
  };
}
