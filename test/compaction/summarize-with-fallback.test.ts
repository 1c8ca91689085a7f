import { SummarizationFailedError, SUMMARIZATION_FAILED } from '../../src/compaction/errors';
import {
  summarizeWithFallback,
  type SummarizeChunk,
  type SummaryChunk,
} from '../../src/compaction/summarize-with-fallback';

interface Call {
  text: string;
  previous?: string | undefined;
  instructions: string;
}

/** A scripted summarizer: fails for texts containing a marker, records every call. */
function summarizer(failWhen: (text: string, instructions: string) => boolean | 'empty' = () => false) {
  const calls: Call[] = [];
  const fn: SummarizeChunk = async (text, previous, instructions) => {
    calls.push({ text, previous, instructions });
    const verdict = failWhen(text, instructions);
    if (verdict === 'empty') return '   ';
    if (verdict) throw new Error(`model failed on ${text.slice(0, 10)}`);
    return instructions === 'MERGE' ? `merged(${text.length})` : `sum(${text})`;
  };
  return { calls, fn };
}

const chunks: SummaryChunk[] = [
  { label: 'Part 1 of 3 (oldest)', text: 'one' },
  { label: 'Part 2 of 3', text: 'two BIG', textWithoutOversized: 'two [note]' },
  { label: 'Part 3 of 3 (most recent)', text: 'three' },
];
const base = { chunkInstructions: 'CHUNK', mergeInstructions: 'MERGE', previousSummary: 'PREV' };

describe('summarizeWithFallback', () => {
  it('summarizes every chunk in full and merges the partials', async () => {
    const s = summarizer();
    const r = await summarizeWithFallback({ ...base, chunks, summarizeChunk: s.fn });
    expect(r).toMatchObject({ mode: 'full', summarizedChunks: [0, 1, 2], failedChunks: [], mergeFailed: false });
    expect(r.summary).toMatch(/^merged\(\d+\)$/);
    const merge = s.calls.find((c) => c.instructions === 'MERGE')!;
    expect(merge.text).toBe(
      '### Part 1 of 3 (oldest)\nsum(one)\n\n### Part 2 of 3\nsum(two BIG)\n\n### Part 3 of 3 (most recent)\nsum(three)',
    );
  });

  it('sends the previous summary once, with the oldest chunk', async () => {
    const s = summarizer();
    await summarizeWithFallback({ ...base, chunks, summarizeChunk: s.fn });
    expect(s.calls.filter((c) => c.previous === 'PREV').map((c) => c.text)).toEqual(['one']);
  });

  it('does not merge a single chunk', async () => {
    const s = summarizer();
    const r = await summarizeWithFallback({ ...base, chunks: [chunks[0]], summarizeChunk: s.fn });
    expect(r.summary).toBe('sum(one)');
    expect(s.calls).toHaveLength(1);
  });

  it('retries a failing chunk without its oversized entries', async () => {
    const s = summarizer((text) => text.includes('BIG'));
    const r = await summarizeWithFallback({ ...base, chunks, summarizeChunk: s.fn });
    expect(r.mode).toBe('withoutOversized');
    expect(s.calls.map((c) => c.text)).toContain('two [note]');
    expect(r.failedChunks).toEqual([]);
  });

  it('treats an empty summary as a failure', async () => {
    const s = summarizer((text) => (text === 'three' ? 'empty' : false));
    const r = await summarizeWithFallback({ ...base, chunks, summarizeChunk: s.fn });
    expect(r.failedChunks).toEqual([2]);
  });

  it('returns a partial summary naming the chunks it could not summarize', async () => {
    const s = summarizer((text) => text.startsWith('two'));
    const r = await summarizeWithFallback({ ...base, chunks, summarizeChunk: s.fn });
    expect(r).toMatchObject({ mode: 'partial', summarizedChunks: [0, 2], failedChunks: [1] });
    expect(r.summary).toMatch(
      /\[Partial summary: summarized Part 1 of 3 \(oldest\); Part 3 of 3 \(most recent\)\. Not summarized \(summarizer failed\): Part 2 of 3\.\]$/,
    );
  });

  it('gives the merge the previous summary when the oldest chunk failed', async () => {
    const s = summarizer((text) => text === 'one');
    await summarizeWithFallback({ ...base, chunks, summarizeChunk: s.fn });
    expect(s.calls.find((c) => c.instructions === 'MERGE')!.previous).toBe('PREV');
  });

  it('joins the labelled partials when the merge fails', async () => {
    const s = summarizer((_t, instructions) => instructions === 'MERGE');
    const r = await summarizeWithFallback({ ...base, chunks, summarizeChunk: s.fn });
    expect(r.mergeFailed).toBe(true);
    expect(r.summary).toContain('### Part 3 of 3 (most recent)\nsum(three)');
  });

  it('throws KeelSummarizationFailed when no chunk can be summarized', async () => {
    const s = summarizer(() => true);
    const error = await summarizeWithFallback({ ...base, chunks, summarizeChunk: s.fn }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SummarizationFailedError);
    expect(error).toMatchObject({ code: SUMMARIZATION_FAILED, chunkCount: 3 });
    expect((error as SummarizationFailedError).chunkErrors).toHaveLength(3);
  });

  it('names each chunk\'s real cause: an activity failure\'s cause, not its own "Activity task failed"', async () => {
    const activityFailure = (why: string) =>
      Object.assign(
        new Error('Activity task failed', { cause: new Error(why, { cause: new Error('raw 500 body') }) }),
        {
          name: 'ActivityFailure',
        },
      );
    const causes = ["the summarizer's window (2048 tokens) leaves 0 tokens", 'model unreachable'];
    let call = 0;
    const err = await summarizeWithFallback({
      ...base,
      chunks: [chunks[0]!, chunks[2]!],
      summarizeChunk: async () => {
        throw activityFailure(causes[call++ % 2]!);
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SummarizationFailedError);
    expect((err as Error).message).toContain(`chunk 1: ${causes[0]}; chunk 2: ${causes[1]}`);
    expect((err as Error).message).not.toContain('Activity task failed');
  });

  it('re-throws cancellation at once instead of falling back', async () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    const fn: SummarizeChunk = async () => {
      throw abort;
    };
    await expect(summarizeWithFallback({ ...base, chunks, summarizeChunk: fn })).rejects.toBe(abort);
  });
});
