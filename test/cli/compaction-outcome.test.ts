import { chatCompactionLine, compactionOutcomeLine } from '../../src/cli/compaction-outcome';
import type { CompactionWorkflowResult } from '../../src/protocol';

const result = (over: Partial<CompactionWorkflowResult>): CompactionWorkflowResult => ({
  compactionId: 'c1',
  status: 'succeeded',
  degraded: false,
  tokensBefore: 9_000,
  tokensAfter: 2_000,
  firstKeptEntryId: 'e9',
  entryId: 'c1',
  ...over,
});

describe('compactionOutcomeLine', () => {
  it.each([
    [result({}), 'compaction succeeded: 9000 → 2000 tokens'],
    [result({ degraded: true }), 'compaction succeeded (degraded: extractive summary): 9000 → 2000 tokens'],
    [
      result({
        status: 'skipped',
        tokensBefore: 22,
        tokensAfter: 22,
        entryId: null,
        skip: { reason: 'no-gain', wouldBeTokens: 111 },
      }),
      'compaction skipped, nothing to gain: with its summary the context would take 111 tokens, not fewer than the 22 it takes now; nothing was written; the context stays at 22 tokens',
    ],
    [
      result({
        status: 'skipped',
        tokensBefore: 40,
        tokensAfter: 40,
        entryId: null,
        skip: { reason: 'nothing-to-summarize' },
      }),
      'compaction skipped, nothing to summarize before the recent messages; nothing was written; the context stays at 40 tokens',
    ],
    [
      result({ status: 'skipped', tokensBefore: 40, tokensAfter: 40, entryId: null }),
      'compaction skipped (nothing to summarize, or a summary would not make the context smaller); nothing was written; the context stays at 40 tokens',
    ],
  ])('says what the compaction did, never a skip as a success (%#)', (r, line) => {
    expect(compactionOutcomeLine(r)).toBe(line);
  });
});

describe('chatCompactionLine', () => {
  const before = { contextTokens: 12_400 };
  const after = { contextTokens: 5_400 };

  it('reports the context as /status counts it, beside the history the compaction measured', () => {
    expect(chatCompactionLine(result({}), before, after)).toBe(
      'compaction succeeded: context 12,400 → 5,400 tokens, as /status counts it (history 9,000 → 2,000); the summary is the model’s',
    );
  });

  it('says when the summary is the extractive fallback, and how to ask the model again', () => {
    expect(chatCompactionLine(result({ degraded: true }), before, after)).toContain(
      'the summary is extractive: every summarizer call failed',
    );
    expect(chatCompactionLine(result({ degraded: true }), before, after)).toContain('keel compactions retry');
  });

  it('words a skip as the plain outcome line does', () => {
    const skipped = result({ status: 'skipped', tokensBefore: 40, tokensAfter: 40, entryId: null });
    expect(chatCompactionLine(skipped, before, before)).toBe(compactionOutcomeLine(skipped));
  });
});
