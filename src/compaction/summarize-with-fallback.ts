/**
 * The summarization fallback chain (OpenClaw): full → without oversized entries → partial summary
 * with a note → `KeelSummarizationFailed`. It never reports success without a summary that reclaims
 * tokens. The model call is injected, so the compaction workflow can substitute activities.
 *
 * Retries are not here: in Keel each `summarizeChunk` is an activity whose Temporal retry policy
 * (OpenClaw's attempts and backoff, `workflows/compaction.ts`) retries it, so this code never sleeps.
 */
import { buildMergeInput } from './prompts';
import { SummarizationFailedError } from './errors';

/** One summarizer call: the chunk's text, the previous summary as context (or none), instructions. */
export type SummarizeChunk = (
  chunkText: string,
  previousSummary: string | undefined,
  instructions: string,
) => Promise<string>;

/** A chunk ready to summarize. */
export interface SummaryChunk {
  /** `chunkLabel(...)`: Part i of n (oldest … most recent) with its UTC time range. */
  readonly label: string;
  readonly text: string;
  /** The text with oversized entries replaced by notes, when the chunk has any. */
  readonly textWithoutOversized?: string;
}

export interface SummarizeWithFallbackInput {
  readonly chunks: readonly SummaryChunk[];
  readonly previousSummary?: string;
  /** `chunkSummaryInstructions(...)`. */
  readonly chunkInstructions: string;
  /** `mergeSummaryInstructions(...)`. */
  readonly mergeInstructions: string;
  readonly summarizeChunk: SummarizeChunk;
  /** Errors that must propagate at once (caller cancellation). Default: `isCancellation`. */
  readonly isTerminal?: (error: unknown) => boolean;
}

export interface SummarizeWithFallbackResult {
  readonly summary: string;
  /** `partial`: some chunks could not be summarized; the summary ends with a note naming them. */
  readonly mode: 'full' | 'withoutOversized' | 'partial';
  readonly summarizedChunks: number[];
  readonly failedChunks: number[];
  /** The merge call failed and the labelled partial summaries were joined instead. */
  readonly mergeFailed: boolean;
}

/** True for cancellation errors (AbortError, Temporal's CancelledFailure), anywhere in the cause chain. */
export function isCancellation(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === 'AbortError' || e.name === 'CancelledFailure') return true;
  }
  return false;
}

type Outcome = { ok: true; summary: string } | { ok: false; error: string };

/** Temporal's wrappers: their own message ("Activity task failed") says nothing of what failed. */
const WRAPPERS = new Set(['ActivityFailure', 'ChildWorkflowFailure']);

/**
 * What really failed: below Temporal's wrappers, the first error's message (an activity's
 * `ApplicationFailure`: the summarizer's window too small, the model's error in Keel's words).
 */
export function causeMessage(error: unknown): string {
  let inner = error;
  for (
    let depth = 0;
    inner instanceof Error && WRAPPERS.has(inner.name) && inner.cause instanceof Error && depth < 5;
    depth++
  )
    inner = inner.cause;
  return inner instanceof Error ? inner.message : String(inner);
}

/**
 * Summarizes the chunks and merges the partial summaries.
 *
 * - Chunks run concurrently. Only the oldest chunk gets the previous summary, so it is sent once
 *   and re-distilled (never carried verbatim); the merge combines the labelled partials.
 * - A chunk that fails (or returns an empty text) is retried with its oversized entries replaced by notes.
 * - When some chunks still fail, the rest are merged and a note names what was not summarized; when
 *   the oldest failed, the merge gets the previous summary so its facts are not lost.
 * - When all fail: `SummarizationFailedError`. Terminal errors (cancellation) are re-thrown unchanged.
 */
export async function summarizeWithFallback(input: SummarizeWithFallbackInput): Promise<SummarizeWithFallbackResult> {
  const isTerminal = input.isTerminal ?? isCancellation;
  const attempt = async (text: string, previous: string | undefined, instructions: string): Promise<Outcome> => {
    try {
      const summary = await input.summarizeChunk(text, previous, instructions);
      return summary.trim() ? { ok: true, summary: summary.trim() } : { ok: false, error: 'empty summary' };
    } catch (error) {
      if (isTerminal(error)) throw error;
      return { ok: false, error: causeMessage(error) };
    }
  };
  const previousFor = (index: number) => (index === 0 ? input.previousSummary : undefined);

  let usedReduced = false;
  const outcomes = await Promise.all(
    input.chunks.map(async (chunk, i) => {
      const full = await attempt(chunk.text, previousFor(i), input.chunkInstructions);
      if (full.ok || chunk.textWithoutOversized === undefined || chunk.textWithoutOversized === chunk.text) return full;
      usedReduced = true;
      return attempt(chunk.textWithoutOversized, previousFor(i), input.chunkInstructions);
    }),
  );

  const summarizedChunks = outcomes.flatMap((o, i) => (o.ok ? [i] : []));
  const failedChunks = outcomes.flatMap((o, i) => (o.ok ? [] : [i]));
  if (summarizedChunks.length === 0) {
    throw new SummarizationFailedError(
      input.chunks.length,
      outcomes.map((o) => (o.ok ? '' : o.error)),
    );
  }

  const partials = summarizedChunks.map((i) => ({
    label: input.chunks[i].label,
    summary: (outcomes[i] as { summary: string }).summary,
  }));
  let summary = partials[0].summary;
  let mergeFailed = false;
  if (partials.length > 1 || (failedChunks.includes(0) && input.previousSummary)) {
    const mergeInput = buildMergeInput(partials);
    const previous = failedChunks.includes(0) ? input.previousSummary : undefined;
    const merged = await attempt(mergeInput, previous, input.mergeInstructions);
    mergeFailed = !merged.ok;
    // Joined partials still reclaim tokens; better than failing a compaction whose chunks succeeded.
    summary = merged.ok ? merged.summary : mergeInput;
  }
  if (failedChunks.length > 0) {
    const done = summarizedChunks.map((i) => input.chunks[i].label).join('; ');
    const missed = failedChunks.map((i) => input.chunks[i].label).join('; ');
    summary += `\n\n[Partial summary: summarized ${done}. Not summarized (summarizer failed): ${missed}.]`;
  }
  return {
    summary,
    mode: failedChunks.length > 0 ? 'partial' : usedReduced ? 'withoutOversized' : 'full',
    summarizedChunks,
    failedChunks,
    mergeFailed,
  };
}
