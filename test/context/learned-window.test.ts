import { scaledWindow, windowFromOverflow } from '../../src/context/learned-window';
import { DEFAULTS } from '../../src/config/defaults';

describe('windowFromOverflow', () => {
  it("learns the provider's stated maximum for the model and the estimate's shortfall for the session", () => {
    // Keel estimated 11,000 tokens of a prompt the provider counted at 31,000 (a session full of identifiers).
    const lesson = windowFromOverflow({ providerMaxTokens: 30_000, providerPromptTokens: 31_000, estimatedPromptTokens: 11_000, currentWindow: 200_000 });
    expect(lesson.modelWindow).toBe(28_500);
    expect(lesson.sessionScale).toBeCloseTo(11_000 / 31_000, 6);
    // The session that overflowed budgets as narrowly as a model-wide scaled window did before.
    expect(scaledWindow(lesson.modelWindow, lesson.sessionScale)).toBe(Math.floor(28_500 * (11_000 / 31_000)));
  });

  it('learns no session scale when the estimate did not fall short, or the provider did not count', () => {
    expect(windowFromOverflow({ providerMaxTokens: 30_000, providerPromptTokens: 31_000, estimatedPromptTokens: 36_000, currentWindow: 200_000 })).toEqual({ modelWindow: 28_500 });
    expect(windowFromOverflow({ providerMaxTokens: 30_000, estimatedPromptTokens: 20_000, currentWindow: 200_000 })).toEqual({ modelWindow: 28_500 });
  });

  it('without a stated maximum, lowers the model below what was sent (content and model cannot be told apart)', () => {
    const lesson = windowFromOverflow({ estimatedPromptTokens: 100_000, currentWindow: 200_000 });
    expect(lesson).toEqual({ modelWindow: Math.floor(100_000 * DEFAULTS.learnedWindowSafety * DEFAULTS.learnedWindowSafety) });
  });

  it('never raises the current window and never goes under the floor', () => {
    expect(windowFromOverflow({ providerMaxTokens: 500_000, providerPromptTokens: 600_000, estimatedPromptTokens: 590_000, currentWindow: 100_000 }).modelWindow).toBe(100_000);
    expect(windowFromOverflow({ providerMaxTokens: 1_000, estimatedPromptTokens: 2_000, currentWindow: 100_000 }).modelWindow).toBe(DEFAULTS.minLearnedWindowTokens);
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
