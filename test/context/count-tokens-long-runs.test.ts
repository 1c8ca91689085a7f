import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { defaultCountTokens } from '../../src/context/estimate-tokens';

describe('defaultCountTokens', () => {
  it('counts ordinary text exactly as gpt-tokenizer does', () => {
    const prose =
      'The deploy to cluster eu-west-1 failed at 10:42; retry with --force after checking /var/log/app.log. '.repeat(
        40,
      );
    expect(defaultCountTokens(prose)).toBe(countTokens(prose));
  });

  it('counts a 200,000-character unbroken run in bounded time, close to its sliced size', () => {
    // Whole, gpt-tokenizer needs minutes for this (quadratic BPE); a test timeout here means the slicing broke.
    const run = 'x'.repeat(200_000);
    const tokens = defaultCountTokens(run);
    // 781 full slices of 256 characters and one of 64.
    expect(tokens).toBe(781 * countTokens('x'.repeat(256)) + countTokens('x'.repeat(64)));
  });

  it('slices only the long runs and keeps the text around them as it is', () => {
    const base64 = 'QUJD'.repeat(1000);
    const text = `before the image data ${base64} after it`;
    expect(defaultCountTokens(text)).toBeGreaterThan(countTokens('before the image data  after it'));
    expect(defaultCountTokens(text)).toBeLessThan(countTokens(base64) * 1.2 + 20);
  });
});
