import { keptTailTokens } from '../../src/compaction/kept-tail';
import { DEFAULTS } from '../../src/config/defaults';

describe('keptTailTokens', () => {
  it.each([
    ['an automatic compaction keeps the default tail', undefined, 'threshold', 200_000, DEFAULTS.keepRecentTokens],
    ['an overflow compaction too', undefined, 'overflow', 200_000, DEFAULTS.keepRecentTokens],
    ['a manual compaction without a request is a hard checkpoint', undefined, 'manual', 200_000, 0],
    ['a requested tail is kept', 5_000, 'manual', 200_000, 5_000],
    ['a requested 0 is a hard checkpoint on any trigger', 0, 'threshold', 200_000, 0],
    [
      'a small window caps the default at its share',
      undefined,
      'threshold',
      40_000,
      Math.floor(40_000 * DEFAULTS.keepRecentMaxWindowShare),
    ],
    [
      'a small window caps a request too',
      30_000,
      'manual',
      40_000,
      Math.floor(40_000 * DEFAULTS.keepRecentMaxWindowShare),
    ],
  ] as const)('%s', (_, requested, trigger, window, expected) => {
    expect(keptTailTokens(requested, trigger, window)).toBe(expected);
  });
});
