import { compactionOutcomeLine } from '../../src/cli/compaction-outcome';
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
