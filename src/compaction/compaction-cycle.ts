/**
 * The order of one compaction once its attempt is recorded: plan, summarize (the model's summary, or
 * the extractive one when none could be had), write. The compaction workflow runs it over activities
 * (workflows/compaction.ts); `keel replay` runs it in memory over a recorded transcript, so both
 * decide the same way from the same steps.
 */

/** What a plan must tell the cycle: whether anything lies before the kept tail. */
export interface PlannedCompaction {
  readonly plan: { readonly chunks: readonly unknown[] };
}

/** The steps of a compaction, each doing its own I/O (activities in the worker, memory in a replay). */
export interface CompactionCycleSteps<Planned extends PlannedCompaction, Result> {
  /** Splits the window into chunks to summarize and the kept tail. */
  plan(): Promise<Planned>;
  /** The outcome when nothing lies before the kept tail: nothing is written. */
  nothingToSummarize(planned: Planned): Promise<Result>;
  /** The summarizer model's summary; undefined when every attempt failed or there is no model. */
  modelSummary(planned: Planned): Promise<string | undefined>;
  /** The model-free summary, written when the model's could not be had (a degraded compaction). */
  extractiveSummary(planned: Planned): Promise<string>;
  /** Writes the summary, unless it would not make the context smaller (`reclaimsTokens`). */
  write(planned: Planned, summary: string, degraded: boolean): Promise<Result>;
}

/** Runs a compaction's steps in order: plan, summarize, write. */
export async function runCompactionCycle<Planned extends PlannedCompaction, Result>(
  steps: CompactionCycleSteps<Planned, Result>,
): Promise<Result> {
  const planned = await steps.plan();
  if (planned.plan.chunks.length === 0) return steps.nothingToSummarize(planned);
  // When no model summary could be had, the extractive one still reclaims the tokens (degraded).
  const modelSummary = await steps.modelSummary(planned);
  const summary = modelSummary ?? (await steps.extractiveSummary(planned));
  return steps.write(planned, summary, modelSummary === undefined);
}

/**
 * No compaction succeeds without reclaiming tokens (OpenClaw's issues: "compaction reports success
 * but reclaims nothing"): a summary and kept tail no smaller than what they replace are not written.
 */
export function reclaimsTokens(compaction: { readonly tokensBefore: number; readonly tokensAfter: number }): boolean {
  return compaction.tokensAfter < compaction.tokensBefore;
}
