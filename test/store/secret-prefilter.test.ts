import fc from 'fast-check';
import { jsonTextMayHoldSecret } from '../../src/security/redact';

/**
 * The prefilter's prefixes as a plain list (the specification): redact.ts writes them as a tree by
 * first letters, which is faster to scan and easy to get subtly wrong. The two must admit the same text.
 */
const PREFIXES =
  /:\/\/|sk-|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|xox[abprs]-|aiza|akia|asia|secret_?access_?key|eyj|bearer|authorization|(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key)=|private key/i;

const specAdmits = (text: string) => text.includes('\\u') || text.includes('\\/') || PREFIXES.test(text);

/** Pieces of every prefix, whole and cut short, so generated text lands on and next to each one. */
const PIECES = [
  '://',
  ':/',
  'sk-',
  'rk-',
  'sk_live_',
  'rk_test_',
  'sk_live',
  'gh',
  'ghp_',
  'ghx_',
  'github_pat_',
  'github_',
  'xoxb-',
  'xoxz-',
  'aiza',
  'aiz',
  'akia',
  'asia',
  'asi',
  'secret',
  'secret_access_key',
  'secretaccesskey',
  'secret_accesskey',
  'access',
  'access-key=',
  'access_key',
  'eyj',
  'ey',
  'bearer',
  'beare',
  'authorization',
  'authorizatio',
  'private key',
  'private',
  'private_key=',
  'privatekey=',
  'password=',
  'password',
  'passwd=',
  'pass',
  'token=',
  'token',
  'api_key=',
  'api-key=',
  'apikey=',
  'apikey',
  'api',
  'secret=',
  'secret-key=',
  '=',
  '_',
  '-',
  ' ',
  '\\u0041',
  '\\/',
  'k',
  's',
  'a',
  'x',
];

/** Each character's case flipped or not. */
const recased = (text: string, flips: readonly boolean[]) =>
  [...text].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c)).join('');

describe('the secret prefilter', () => {
  it('admits exactly the text its list of prefixes admits, in any case', () => {
    const text = fc
      .tuple(
        fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 3 })), { maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
      )
      .map(([parts, flips]) => recased(parts.join(''), flips));
    fc.assert(
      fc.property(text, (t) => {
        expect(jsonTextMayHoldSecret(t)).toBe(specAdmits(t));
      }),
      { numRuns: 5000 },
    );
  });

  it('admits each prefix alone and refuses text that only comes close', () => {
    for (const prefix of [
      '://',
      'SK-',
      'rk_TEST_',
      'ghs_',
      'GitHub_PAT_',
      'xoxp-',
      'AIza',
      'AKIA',
      'asia',
      'secretaccesskey',
      'eyJ',
      'Bearer',
      'Authorization',
      'Private Key',
      'PASSWORD=',
      'passwd=',
      'token=',
      'api-key=',
      'ApiKey=',
      'access_key=',
      'secret_key=',
      'private-key=',
      'secret=',
    ]) {
      expect(jsonTextMayHoldSecret(`{"text":"a ${prefix} b"}`)).toBe(true);
    }
    for (const near of [
      'sk_live',
      'ghx_',
      'xoxz-',
      'aiz',
      'secret access key',
      'bear er',
      'password',
      'token =',
      'api key=',
      'private_key',
    ]) {
      expect(jsonTextMayHoldSecret(`{"text":"a ${near} b"}`)).toBe(false);
    }
  });
});
