/**
 * Bridges the pure fallback chain (`summarizeWithFallback`, which routes strings) to activities
 * that read chunks from the database: each chunk's "text" here is a claim check naming the chunk
 * and the mode, so no transcript text enters workflow history. Merge calls carry real text
 * (labelled partial summaries, bounded by the summary cap).
 */
import type { SummarizeChunk, SummaryChunk } from '../src/compaction/summarize-with-fallback';
import { chunkLabel } from '../src/compaction/prompts';
import type { CompactionPlan } from '../src/compaction/types';

/** Prefix of a chunk claim check; a NUL never occurs in a merge input. */
const CHUNK_REF_PREFIX = '\u0000keel-chunk:';

export interface ChunkCalls {
  /** Summarize planned chunk `index` (read by the activity from its entry range). */
  chunk(
    index: number,
    mode: 'full' | 'withoutOversized',
    previousSummary: string | undefined,
    instructions: string,
  ): Promise<string>;
  /** Summarize a text (the merge of partial summaries). */
  text(text: string, previousSummary: string | undefined, instructions: string): Promise<string>;
}

/** The chunks of a plan as claim checks, and the `summarizeChunk` that routes them to activities. */
export function chunkClaimChecks(
  plan: CompactionPlan,
  calls: ChunkCalls,
): { chunks: SummaryChunk[]; summarizeChunk: SummarizeChunk } {
  const total = plan.chunks.length;
  const hasOversized = (i: number) => plan.chunks[i].tokensWithoutOversized !== plan.chunks[i].tokens;
  const chunks = plan.chunks.map((c, i) => ({
    label: chunkLabel(i, total, c.fromTimestamp, c.toTimestamp),
    text: `${CHUNK_REF_PREFIX}${i}:full`,
    ...(hasOversized(i) ? { textWithoutOversized: `${CHUNK_REF_PREFIX}${i}:withoutOversized` } : {}),
  }));
  const summarizeChunk: SummarizeChunk = (text, previousSummary, instructions) => {
    if (!text.startsWith(CHUNK_REF_PREFIX)) return calls.text(text, previousSummary, instructions);
    const [index, mode] = text.slice(CHUNK_REF_PREFIX.length).split(':');
    return calls.chunk(Number(index), mode as 'full' | 'withoutOversized', previousSummary, instructions);
  };
  return { chunks, summarizeChunk };
}
