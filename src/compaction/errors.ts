/**
 * Compaction errors users and operators can act on.
 */
import { FailureTypes } from '../protocol';

/** Failure type name (an `ApplicationFailure` type in activities, the `compactions.error` code). */
export const SUMMARIZATION_FAILED = FailureTypes.SummarizationFailed;

/**
 * Every chunk failed, with and without oversized entries: no summary, so no tokens reclaimed.
 * The compaction is recorded as failed; an operator may retry it (`keel compactions retry <id>`),
 * or the caller writes the extractive summary and marks the compaction degraded.
 */
export class SummarizationFailedError extends Error {
  readonly code = SUMMARIZATION_FAILED;
  constructor(
    /** How many chunks the plan had; none could be summarized. */
    readonly chunkCount: number,
    /** The last error of each chunk, by chunk index, as text. */
    readonly chunkErrors: readonly string[],
  ) {
    super(
      `Summarization failed for all ${chunkCount} chunk(s) (${causes(chunkErrors)}). ` +
        'Retry the compaction, set a working compaction model, or use the extractive summary.',
    );
    this.name = 'SummarizationFailedError';
  }
}

/** `chunk 1: why; chunk 2: why`, or one `why` when every chunk failed alike. */
function causes(chunkErrors: readonly string[]): string {
  const distinct = [...new Set(chunkErrors)];
  if (distinct.length === 0) return 'no error recorded';
  if (distinct.length === 1) return distinct[0]!;
  return chunkErrors.map((why, i) => `chunk ${i + 1}: ${why}`).join('; ');
}
