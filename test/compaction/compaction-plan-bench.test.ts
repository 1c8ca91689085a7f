import { run } from '../../bench/compaction-plan';

describe('bench/compaction-plan run()', () => {
  const result = run({ sizes: [50_000], stackedTokens: 700_000 });

  it('plans a transcript of the requested size', () => {
    expect(result.plan[0].tokensBefore).toBeGreaterThanOrEqual(50_000);
    expect(result.plan[0].chunks).toBeGreaterThan(0);
  });

  it('sends the summarizer only the previous summary and the new entries, however long the history', () => {
    expect(result.stacked.length).toBeGreaterThanOrEqual(3);
    const first = result.stacked[0].summarizerInputTokens;
    for (const row of result.stacked) {
      // Serialization adds role labels (a few %), nothing proportional to the history.
      expect(row.summarizerInputTokens).toBeLessThan(row.expectedInputTokens * 1.1);
      expect(row.summarizerInputTokens).toBeLessThan(first * 1.1);
    }
    expect(result.stacked[result.stacked.length - 1].historyTokens).toBeGreaterThan(3 * first);
  });
});
