import {
  DEFAULT_RESERVE_TOKENS,
  effectiveReserveTokens,
  maxOutputTokensFor,
  memoryFlushThresholdTokens,
  pressureLevel,
  resolveContextWindowTokens,
  resolveReserveTokens,
  shouldCompactAfterTurn,
  shouldRunMemoryFlush,
} from '../../src/context/context-window';

describe('resolveContextWindowTokens', () => {
  const config = { models: { providers: { anthropic: { models: [{ id: 'claude-x', contextWindow: 150_000 }] } } } };
  const catalog = [
    { provider: 'anthropic', id: 'claude-x', contextWindow: 1_000_000 },
    { provider: 'anthropic', id: 'claude-y', contextWindow: 400_000 },
  ];

  it.each([
    [
      'the config override wins over the catalog',
      { config, catalog },
      'claude-x',
      { tokens: 150_000, source: 'config' },
    ],
    [
      'the catalog value is used without an override',
      { config, catalog },
      'claude-y',
      { tokens: 400_000, source: 'catalog' },
    ],
    ['the default is 200,000', {}, 'claude-z', { tokens: 200_000, source: 'default' }],
    [
      'the agent cap lowers the window',
      { catalog, agentContextTokens: 100_000 },
      'claude-y',
      { tokens: 100_000, source: 'agentContextTokens' },
    ],
    [
      'the agent cap never raises it',
      { catalog, agentContextTokens: 900_000 },
      'claude-y',
      { tokens: 400_000, source: 'catalog' },
    ],
    [
      'the agent cap lowers the default',
      { agentContextTokens: 32_000 },
      'claude-z',
      { tokens: 32_000, source: 'agentContextTokens' },
    ],
  ])('%s', (_rule, extra, model, expected) => {
    expect(resolveContextWindowTokens({ provider: 'anthropic', model, ...extra })).toEqual(expected);
  });

  it('does not use a catalog row of another provider', () => {
    expect(resolveContextWindowTokens({ provider: 'openai', model: 'claude-y', catalog }).source).toBe('default');
  });
});

describe('resolveReserveTokens', () => {
  it.each([
    ['raises a small reserve to the 20,000 floor', { reserveTokens: 5_000 }, 20_000],
    ['keeps a reserve above the floor', { reserveTokens: 30_000 }, 30_000],
    ['uses the default reserve raised to the floor', {}, Math.max(DEFAULT_RESERVE_TOKENS, 20_000)],
    ['honours a custom floor', { reserveTokens: 5_000, reserveTokensFloor: 8_000 }, 8_000],
    ['disables the floor with 0', { reserveTokens: 5_000, reserveTokensFloor: 0 }, 5_000],
  ])('%s', (_rule, input, expected) => {
    expect(resolveReserveTokens(input)).toBe(expected);
  });
});

describe('effectiveReserveTokens', () => {
  it.each([
    ['the floor decides in a large window', 200_000, undefined, undefined, 20_000],
    ['a reserve above the floor stands', 200_000, 60_000, undefined, 60_000],
    ['never more than half the window, the floor included', 30_000, 16_384, undefined, 15_000],
    ['half of a 4,000-token local window', 4_000, undefined, undefined, 2_000],
    ['a configured reserve under half a small window stands once the floor is off', 8_000, 1_500, 0, 1_500],
    ['a lower floor lets a small reserve stand', 100_000, 5_000, 8_000, 8_000],
    ['an explicit reserve larger than the window is still held to half', 4_000, 20_000, 0, 2_000],
  ])('%s', (_rule, window, reserve, floor, expected) => {
    expect(effectiveReserveTokens(window, reserve, floor)).toBe(expected);
  });
});

describe('maxOutputTokensFor', () => {
  it.each([
    ['the default 4,096 in a large window', 200_000, {}, 4_096],
    ['the default takes at most half the reserve of a small window', 4_000, {}, 1_000],
    ['a configured value stands while the reserve holds it', 200_000, { maxOutputTokens: 16_000 }, 16_000],
    ['a configured value is held to the reserve', 200_000, { maxOutputTokens: 64_000 }, 20_000],
    ['a configured value in a small window is held to its reserve', 4_000, { maxOutputTokens: 3_000 }, 2_000],
    ['the reserve settings decide the default too', 8_000, { reserveTokens: 1_000, reserveTokensFloor: 0 }, 500],
  ])('%s', (_rule, window, settings, expected) => {
    expect(maxOutputTokensFor(window, settings)).toBe(expected);
  });

  it('leaves the prompt budget and the reply inside the window, whatever the settings', () => {
    for (const window of [1_000, 4_000, 16_000, 200_000]) {
      for (const settings of [
        {},
        { maxOutputTokens: 100_000 },
        { maxOutputTokens: 100_000, reserveTokens: 300, reserveTokensFloor: 0 },
      ]) {
        const reserve = effectiveReserveTokens(window, settings.reserveTokens, settings.reserveTokensFloor);
        expect(window - reserve + maxOutputTokensFor(window, settings)).toBeLessThanOrEqual(window);
      }
    }
  });
});

describe('shouldCompactAfterTurn', () => {
  it('compacts only when context exceeds window minus reserve', () => {
    expect(shouldCompactAfterTurn(180_000, 200_000, 20_000)).toBe(false);
    expect(shouldCompactAfterTurn(180_001, 200_000, 20_000)).toBe(true);
  });
});

describe('memory flush threshold', () => {
  it('sits softThresholdTokens (4,000 by default) below the compaction threshold', () => {
    expect(memoryFlushThresholdTokens(200_000, 20_000)).toBe(176_000);
    expect(memoryFlushThresholdTokens(200_000, 20_000, 10_000)).toBe(170_000);
  });

  it('stays within a quarter of the budget below the threshold in a small window', () => {
    expect(memoryFlushThresholdTokens(4_000, 2_000)).toBe(1_500);
    expect(memoryFlushThresholdTokens(16_000, 8_000)).toBe(6_000);
    expect(memoryFlushThresholdTokens(4_000, 4_000)).toBe(0);
  });

  it('runs once the soft threshold is crossed and not again in the same compaction cycle', () => {
    const base = { contextWindow: 200_000, reserveTokens: 20_000 };
    expect(shouldRunMemoryFlush({ ...base, contextTokens: 175_999 })).toBe(false);
    expect(
      shouldRunMemoryFlush({ ...base, contextTokens: 176_000, compactionCount: 2, memoryFlushCompactionCount: 1 }),
    ).toBe(true);
    expect(
      shouldRunMemoryFlush({ ...base, contextTokens: 179_000, compactionCount: 2, memoryFlushCompactionCount: 2 }),
    ).toBe(false);
  });
});

describe('pressureLevel', () => {
  it.each([
    [0, 'normal'],
    [49_999, 'normal'],
    [50_000, '50'],
    [69_999, '50'],
    [70_000, '70'],
    [85_000, '70'],
    [85_001, '85'],
    [120_000, '85'],
  ])('%i of 100,000 tokens is %s', (used, level) => {
    expect(pressureLevel(used, 100_000)).toBe(level);
  });
});
