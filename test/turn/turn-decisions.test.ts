import { decideAfterTurn } from '../../src/turn/turn-decisions';

const base = {
  contextWindow: 100_000,
  reserveTokens: 20_000,
  softThresholdTokens: 4_000,
  compactionCount: 0,
  memoryFlushCompactionCount: null,
  compactionFailures: 0,
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

  it('flushes once per compaction cycle', () => {
    expect(decideAfterTurn({ ...base, contextTokens: 79_000, compactionCount: 2, memoryFlushCompactionCount: 2 }).memoryFlush).toBe(false);
    expect(decideAfterTurn({ ...base, contextTokens: 79_000, compactionCount: 3, memoryFlushCompactionCount: 2 }).memoryFlush).toBe(true);
  });

  it('stops auto-compacting after three consecutive failures', () => {
    const d = decideAfterTurn({ ...base, contextTokens: 90_000, compactionFailures: 3 });
    expect(d).toMatchObject({ compact: false, autoCompactionPaused: true });
  });

  it('raises a reserve below the 20,000 floor', () => {
    expect(decideAfterTurn({ ...base, reserveTokens: 1_000, contextTokens: 85_000 }).compact).toBe(true);
  });
});
