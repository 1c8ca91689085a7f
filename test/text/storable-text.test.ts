import { findUnstorable, storableJson, storableJsonText, storableText } from '../../src/text/storable-text';
import { prng } from '../fixtures/generate';
import { announcedSeed } from '../support/test-seed';

const R = '\uFFFD';

describe('storableText', () => {
  it.each([
    ['plain ASCII', 'hello', 'hello'],
    ['NUL', 'a\u0000b', `a${R}b`],
    ['several NULs', '\u0000\u0000', `${R}${R}`],
    ['a lone high surrogate', 'x\ud800y', `x${R}y`],
    ['a lone high surrogate at the end', 'x\ud800', `x${R}`],
    ['a lone low surrogate', 'x\udc00y', `x${R}y`],
    ['a low surrogate before a high one (reversed pair)', '\udc00\ud800', `${R}${R}`],
    ['a valid pair (emoji) is kept', 'ok 😀', 'ok 😀'],
    ['a valid pair next to a lone high surrogate', '\ud800\ud83d\ude00', `${R}😀`],
    ['other control characters are kept', 'tab\there\u0001', 'tab\there\u0001'],
  ])('%s', (_name, input, expected) => {
    expect(storableText(input)).toBe(expected);
  });

  it('is idempotent and returns the same string when nothing needs replacing', () => {
    const clean = 'nothing to do ✓';
    expect(storableText(clean)).toBe(clean);
    const once = storableText('a\u0000\ud800');
    expect(storableText(once)).toBe(once);
  });
});

describe('storableJson', () => {
  it('replaces in nested strings and object keys, copying only what changed', () => {
    const untouched = { deep: ['x', 1, true, null] };
    const value = { text: 'a\u0000', ['k\ud800']: 1, list: ['ok', { inner: '\udc00' }], untouched };
    const out = storableJson(value);
    expect(out).toEqual({ text: `a${R}`, [`k${R}`]: 1, list: ['ok', { inner: R }], untouched });
    expect(out.untouched).toBe(untouched);
    expect(value.text).toBe('a\u0000'); // the input is not mutated
  });

  it('returns the same object when nothing needs replacing', () => {
    const value = { a: ['b', { c: 'd' }], n: 3 };
    expect(storableJson(value)).toBe(value);
  });
});

describe('storableJsonText', () => {
  it('replaces what JSON.stringify escaped, and keeps clean text as is', () => {
    const json = JSON.stringify({ a: 'x\u0000', b: '\ud800' });
    expect(JSON.parse(storableJsonText(json))).toEqual({ a: `x${R}`, b: R });
    const clean = JSON.stringify({ a: 'x 😀' });
    expect(storableJsonText(clean)).toBe(clean);
  });
});

describe('findUnstorable', () => {
  it('counts NULs and lone surrogates and the first index', () => {
    expect(findUnstorable('ok')).toBeUndefined();
    expect(findUnstorable('ab\ud800\u0000\u0000😀\udc00')).toEqual({ nul: 2, loneSurrogates: 2, firstIndex: 2 });
  });
});

// Code units chosen to hit every case: NUL, surrogates of both halves, pairs, ASCII, BMP text.
const UNITS = [0x0000, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x41, 0x20, 0xe9, 0x4e2d, 0xfffd];

function randomText(r: () => number): string {
  const n = Math.floor(r() * 12);
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(UNITS[Math.floor(r() * UNITS.length)]!);
  return s;
}

describe('storableText property', () => {
  it('yields well-formed UTF-16 without NUL, of the same length, changing only unstorable units', () => {
    const seed = announcedSeed('KEEL_TEST_SEED', 'storableText property');
    const r = prng(seed);
    for (let run = 0; run < 20_000; run++) {
      const input = randomText(r);
      const out = storableText(input);
      const fail = (why: string) => {
        throw new Error(`seed ${seed}, run ${run}: ${why} for ${JSON.stringify(input)} → ${JSON.stringify(out)}`);
      };
      if (out.length !== input.length) fail('length changed');
      if (out.includes('\u0000')) fail('NUL kept');
      // A well-formed string survives a UTF-8 round trip unchanged.
      if (Buffer.from(out, 'utf8').toString('utf8') !== out) fail('not well-formed');
      if (findUnstorable(out) !== undefined || storableText(out) !== out) fail('not idempotent');
      for (let i = 0; i < input.length; i++)
        if (out[i] !== input[i] && out[i] !== R) fail(`unit ${i} changed to something other than U+FFFD`);
      if (findUnstorable(input) === undefined && out !== input) fail('clean text changed');
    }
  });
});
