import { scaleAfterReading, scaledWindow, windowFromOverflow } from '../../src/context/learned-window';
import { DEFAULTS } from '../../src/config/defaults';

describe('windowFromOverflow', () => {
  it("learns the provider's stated maximum for the model and the estimate's shortfall for the session", () => {
    // Keel estimated 11,000 tokens of a prompt the provider counted at 31,000 (a session full of identifiers).
    const lesson = windowFromOverflow({
      providerMaxTokens: 30_000,
      providerPromptTokens: 31_000,
      estimatedPromptTokens: 11_000,
      currentWindow: 200_000,
    });
    expect(lesson.modelWindow).toBe(28_500);
    expect(lesson.sessionScale).toBeCloseTo(11_000 / 31_000, 6);
    // The session that overflowed budgets as narrowly as a model-wide scaled window did before.
    expect(scaledWindow(lesson.modelWindow, lesson.sessionScale)).toBe(Math.floor(28_500 * (11_000 / 31_000)));
  });

  it('learns no session scale when the estimate did not fall short, or the provider did not count', () => {
    expect(
      windowFromOverflow({
        providerMaxTokens: 30_000,
        providerPromptTokens: 31_000,
        estimatedPromptTokens: 36_000,
        currentWindow: 200_000,
      }),
    ).toEqual({ modelWindow: 28_500 });
    expect(
      windowFromOverflow({ providerMaxTokens: 30_000, estimatedPromptTokens: 20_000, currentWindow: 200_000 }),
    ).toEqual({ modelWindow: 28_500 });
  });

  it('without a stated maximum, lowers the model below what was sent (content and model cannot be told apart)', () => {
    const lesson = windowFromOverflow({ estimatedPromptTokens: 100_000, currentWindow: 200_000 });
    expect(lesson).toEqual({
      modelWindow: Math.floor(100_000 * DEFAULTS.learnedWindowSafety * DEFAULTS.learnedWindowSafety),
    });
  });

  it('never raises the current window and never goes under the floor', () => {
    expect(
      windowFromOverflow({
        providerMaxTokens: 500_000,
        providerPromptTokens: 600_000,
        estimatedPromptTokens: 590_000,
        currentWindow: 100_000,
      }).modelWindow,
    ).toBe(100_000);
    expect(
      windowFromOverflow({ providerMaxTokens: 1_000, estimatedPromptTokens: 2_000, currentWindow: 100_000 })
        .modelWindow,
    ).toBe(DEFAULTS.minLearnedWindowTokens);
  });
});

describe('scaledWindow', () => {
  it("keeps the model's window for a session without a shortfall", () => {
    for (const scale of [undefined, null, 1, 1.4, 0, Number.NaN]) expect(scaledWindow(28_500, scale)).toBe(28_500);
  });

  it('scales by a shortfall, down to the floor at most', () => {
    expect(scaledWindow(28_500, 0.5)).toBe(14_250);
    expect(scaledWindow(28_500, 0.01)).toBe(DEFAULTS.minLearnedWindowTokens);
    // A model window already under the floor is not raised by the floor.
    expect(scaledWindow(3_000, 0.5)).toBe(3_000);
  });
});

describe('scaleAfterReading', () => {
  // A session that learned 0.35 at a refusal, in a 28,500-token model window: 9,975 tokens in force, half of it the prompt's.
  const budget = Math.floor(scaledWindow(28_500, 0.35) / 2);

  it('raises the scale to what a large prompt measured, or clears it once the estimate no longer falls short', () => {
    expect(scaleAfterReading({ estimatedPromptTokens: 4_500, providerPromptTokens: 6_000, budget, scale: 0.35 })).toBe(
      0.75,
    );
    expect(
      scaleAfterReading({ estimatedPromptTokens: 4_500, providerPromptTokens: 4_000, budget, scale: 0.35 }),
    ).toBeNull();
    expect(
      scaleAfterReading({ estimatedPromptTokens: 4_500, providerPromptTokens: 4_500, budget, scale: 0.35 }),
    ).toBeNull();
  });

  it('reads nothing from a prompt under half the budget: its fixed parts would decide the reading', () => {
    expect(
      scaleAfterReading({
        estimatedPromptTokens: Math.floor(budget / 2) - 1,
        providerPromptTokens: 1_000,
        budget,
        scale: 0.35,
      }),
    ).toBeUndefined();
    expect(
      scaleAfterReading({
        estimatedPromptTokens: Math.ceil(budget / 2),
        providerPromptTokens: 5_000,
        budget,
        scale: 0.35,
      }),
    ).toBe(Math.floor((Math.ceil(budget / 2) / 5_000) * 1000) / 1000);
  });

  it('never lowers (a refusal does, stating both counts) and skips a rise too small to be worth a write', () => {
    expect(
      scaleAfterReading({ estimatedPromptTokens: 4_500, providerPromptTokens: 30_000, budget, scale: 0.35 }),
    ).toBeUndefined();
    expect(
      scaleAfterReading({ estimatedPromptTokens: 4_500, providerPromptTokens: 4_500 / 0.39, budget, scale: 0.35 }),
    ).toBeUndefined();
    expect(
      scaleAfterReading({ estimatedPromptTokens: 4_500, providerPromptTokens: 4_500 / 0.41, budget, scale: 0.35 }),
    ).toBe(0.41);
  });

  it('leaves a session without a scale alone, and ignores a call the provider reported no count for', () => {
    expect(
      scaleAfterReading({ estimatedPromptTokens: 20_000, providerPromptTokens: 10_000, budget: 25_000, scale: null }),
    ).toBeUndefined();
    expect(
      scaleAfterReading({
        estimatedPromptTokens: 20_000,
        providerPromptTokens: 40_000,
        budget: 25_000,
        scale: undefined,
      }),
    ).toBeUndefined();
    expect(
      scaleAfterReading({ estimatedPromptTokens: 4_500, providerPromptTokens: 0, budget, scale: 0.35 }),
    ).toBeUndefined();
  });
});
