import { summaryCharBudget } from '../../src/compaction/summary-budget';

describe('summaryCharBudget', () => {
  it.each([
    [200_000, 16_000], // the 16k-character cap binds on large windows
    [30_000, 12_000], // 10% of 30k tokens ≈ 3k tokens ≈ 12k characters
    [8_000, 3_200],
    [1_000, 1_000], // a floor keeps room for the identifiers section
  ])('window %i tokens → %i characters', (window, chars) => {
    expect(summaryCharBudget(window)).toBe(chars);
  });
});
