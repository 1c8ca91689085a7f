import { decideAfterTurn } from '../../src/turn/turn-decisions';

const base = {
  contextWindow: 100_000,
  reserveTokens: 20_000,
  softThresholdTokens: 4_000,
  compactionCount: 0,
  memoryFlushCompactionCount: null,
  compactionFailures: 0,
  minReclaimShare: 0.1,
  backgroundCompactionShare: 0,
};

describe('decideAfterTurn', () => {
  it.each([
    // contextTokens, flush, compact
    [50_000, false, false],
    [75_999, false, false],
    [76_000, true, false], // soft threshold = 100k − 20k − 4k
    [80_000, true, false], // not above window − reserve yet
    [80_001, true, true],
  ])('at %i context tokens: flush %s, compact %s', (contextTokens, flush, compact) => {
    expect(decideAfterTurn({ ...base, contextTokens })).toMatchObject({ memoryFlush: flush, compact });
  });

  it.each([
    // contextTokens, compactBeside, compact: the background share is 70% of window − reserve (80k) = 56k
    [56_000, false, false],
    [56_001, true, false],
    [80_000, true, false],
    [80_001, false, true], // at the threshold the session compacts (waiting for one already beside it)
  ])(
    'with a background share of 0.7, at %i context tokens: beside %s, threshold %s',
    (contextTokens, beside, compact) => {
      expect(decideAfterTurn({ ...base, backgroundCompactionShare: 0.7, contextTokens })).toMatchObject({
        compactBeside: beside,
        compact,
      });
    },
  );

  it('starts no background compaction when the share is 0, when paused, or while a low-yield compaction holds', () => {
    expect(decideAfterTurn({ ...base, contextTokens: 70_000 }).compactBeside).toBe(false);
    const beside = { ...base, backgroundCompactionShare: 0.7, contextTokens: 70_000 };
    expect(decideAfterTurn({ ...beside, compactionFailures: 3 }).compactBeside).toBe(false);
    // The last compaction freed 5% of 65k: held until 65k + 10% of the window = 75k.
    const lowYield = { tokensBefore: 65_000, tokensAfter: 61_750 };
    expect(decideAfterTurn({ ...beside, lastCompaction: lowYield }).compactBeside).toBe(false);
    expect(decideAfterTurn({ ...beside, contextTokens: 75_000, lastCompaction: lowYield }).compactBeside).toBe(true);
  });

  it('flushes once per compaction cycle', () => {
    expect(
      decideAfterTurn({ ...base, contextTokens: 79_000, compactionCount: 2, memoryFlushCompactionCount: 2 })
        .memoryFlush,
    ).toBe(false);
    expect(
      decideAfterTurn({ ...base, contextTokens: 79_000, compactionCount: 3, memoryFlushCompactionCount: 2 })
        .memoryFlush,
    ).toBe(true);
  });

  it('stops auto-compacting after three consecutive failures', () => {
    const d = decideAfterTurn({ ...base, contextTokens: 90_000, compactionFailures: 3 });
    expect(d).toMatchObject({ compact: false, autoCompactionPaused: true });
  });

  describe('compaction storms', () => {
    it('holds threshold compaction after one that freed less than the minimum share, until the context grew past it', () => {
      // The last compaction went from 81,000 to 79,000 tokens (2.5 % freed): the next turn at 81,500 must not compact again.
      const lowYield = { tokensBefore: 81_000, tokensAfter: 79_000 };
      expect(decideAfterTurn({ ...base, contextTokens: 81_500, lastCompaction: lowYield })).toMatchObject({
        compact: false,
        compactionHeldUntilTokens: 90_000,
      });
      // The hold ends halfway into the reserve (100k − 10k), before the provider would refuse.
      expect(decideAfterTurn({ ...base, contextTokens: 90_000, lastCompaction: lowYield })).toMatchObject({
        compact: true,
      });
      expect(
        decideAfterTurn({ ...base, contextTokens: 90_000, lastCompaction: lowYield }).compactionHeldUntilTokens,
      ).toBeUndefined();
    });

    it('does not hold after a compaction that freed enough, nor when the hold is off', () => {
      expect(
        decideAfterTurn({
          ...base,
          contextTokens: 81_500,
          lastCompaction: { tokensBefore: 81_000, tokensAfter: 30_000 },
        }).compact,
      ).toBe(true);
      expect(
        decideAfterTurn({
          ...base,
          contextTokens: 81_500,
          lastCompaction: { tokensBefore: 81_000, tokensAfter: 79_000 },
          minReclaimShare: 0,
        }).compact,
      ).toBe(true);
    });

    it('a hold below the threshold changes nothing', () => {
      const d = decideAfterTurn({
        ...base,
        contextTokens: 50_000,
        lastCompaction: { tokensBefore: 81_000, tokensAfter: 79_000 },
      });
      expect(d).toMatchObject({ compact: false });
      expect(d.compactionHeldUntilTokens).toBeUndefined();
    });
  });

  it('raises a reserve below the 20,000 floor', () => {
    expect(decideAfterTurn({ ...base, reserveTokens: 1_000, contextTokens: 85_000 }).compact).toBe(true);
  });
});
