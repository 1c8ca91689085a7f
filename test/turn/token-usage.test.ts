import { addUsage, NO_USAGE, usageOfReply } from '../../src/turn/token-usage';

describe('addUsage', () => {
  it('adds field by field, and NO_USAGE adds nothing', () => {
    const a = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4 };
    expect(addUsage(a, { inputTokens: 10, outputTokens: 20, cacheReadTokens: 30, cacheWriteTokens: 40 })).toEqual({
      inputTokens: 11,
      outputTokens: 22,
      cacheReadTokens: 33,
      cacheWriteTokens: 44,
    });
    expect(addUsage(NO_USAGE, a)).toEqual(a);
  });
});

describe('usageOfReply', () => {
  it.each([
    [
      'every count',
      { input: 5, output: 6, cacheRead: 7, cacheWrite: 8 },
      { inputTokens: 5, outputTokens: 6, cacheReadTokens: 7, cacheWriteTokens: 8 },
    ],
    [
      'no cache counts',
      { input: 5, output: 6 },
      { inputTokens: 5, outputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 0 },
    ],
    ['no usage at all (an imported reply)', undefined, NO_USAGE],
  ])('converts a reply with %s', (_, reported, expected) => {
    expect(usageOfReply(reported)).toEqual(expected);
  });
});
