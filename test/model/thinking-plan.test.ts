import { thinkingPlan } from '../../src/model/thinking-plan';

describe('thinkingPlan', () => {
  it.each([
    ['off', 4_096, 20_000, { maxTokens: 4_096 }],
    ['minimal', 4_096, 20_000, { maxTokens: 5_120, thinking: { level: 'minimal', budgetTokens: 1_024 } }],
    ['low', 4_096, 20_000, { maxTokens: 6_144, thinking: { level: 'low', budgetTokens: 2_048 } }],
    // The reserve holds the reply and the budget: "high" gets what the reserve leaves beside the reply.
    ['high', 4_096, 20_000, { maxTokens: 20_000, thinking: { level: 'high', budgetTokens: 15_904 } }],
  ] as const)('%s with a %i-token reply in a %i-token reserve', (level, reply, reserve, expected) => {
    expect(thinkingPlan(level, reply, reserve)).toEqual(expected);
  });

  it('names the settings to change when the reserve leaves less than the API’s 1,024-token floor', () => {
    expect(thinkingPlan('low', 1_000, 2_000)).toEqual({
      problem:
        `thinking level "low" needs at least 1024 tokens of thinking budget beside the reply's 1000 (maxOutputTokens), ` +
        "but the window's reserve of 2000 tokens leaves 1000: raise reserveTokens, lower maxOutputTokens, or set the thinking level to off",
    });
  });
});
