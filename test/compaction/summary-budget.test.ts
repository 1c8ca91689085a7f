import { summaryCharBudget } from '../../src/compaction/summary-budget';

describe('summaryCharBudget', () => {
  it.each([
    [200_000, 32_000], // 4% of 200k tokens = 8k tokens ≈ 32k characters
    [30_000, 4_800],
    [1_000, 1_000], // a floor keeps room for the sections and the identifiers
  ])('window %i tokens, nothing known of what it replaces → %i characters', (window, chars) => {
    expect(summaryCharBudget(window)).toBe(chars);
  });

  it.each([
    // 5% of the summarized messages, at 4 characters a token, on top of the previous summary
    [200_000, 40_000, 0, 8_000],
    [200_000, 40_000, 6_000, 14_000],
    // never past 4% of the window, however much it replaces
    [200_000, 1_300_000, 0, 32_000],
    [200_000, 40_000, 30_000, 32_000],
    // never below the floor
    [200_000, 200, 0, 1_000],
  ])(
    'window %i, %i tokens summarized, previous summary %i chars → %i characters',
    (window, summarizedTokens, previousSummaryChars, chars) => {
      expect(summaryCharBudget(window, { summarizedTokens, previousSummaryChars })).toBe(chars);
    },
  );

  it('takes the window share it is given (KEEL_SUMMARY_MAX_WINDOW_SHARE)', () => {
    expect(summaryCharBudget(200_000, { summarizedTokens: 1_300_000, previousSummaryChars: 0 }, 0.1)).toBe(80_000);
    expect(summaryCharBudget(200_000, undefined, 0.005)).toBe(4_000);
  });

  it('grows with each stacked compaction until the window share caps it', () => {
    let previous = 0;
    const budgets: number[] = [];
    for (let k = 0; k < 10; k++)
      budgets.push(
        (previous = summaryCharBudget(200_000, { summarizedTokens: 30_000, previousSummaryChars: previous })),
      );
    expect(budgets.slice(0, 6)).toEqual([6_000, 12_000, 18_000, 24_000, 30_000, 32_000]);
    expect(new Set(budgets.slice(5))).toEqual(new Set([32_000]));
  });
});
