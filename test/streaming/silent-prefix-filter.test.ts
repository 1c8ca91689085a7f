import { SilentPrefixFilter } from '../../src/streaming/silent-prefix-filter';

/** Feeds the deltas, then ends the reply; returns what was released after each step and at the end. */
function run(deltas: string[]): { released: string[]; atEnd: string } {
  const filter = new SilentPrefixFilter();
  const released = deltas.map((d) => filter.push(d));
  return { released, atEnd: filter.end() };
}

describe('SilentPrefixFilter', () => {
  it.each([
    ['a plain reply passes through delta by delta', ['Hello', ' there'], ['Hello', ' there'], ''],
    ['the silent token streams nothing', ['NO', '_RE', 'PLY'], ['', '', ''], ''],
    ['lower case is the token too', ['no_re', 'ply'], ['', ''], ''],
    ['a reply starting with the token and more streams nothing', ['NO_REPLY', ': done', ' quietly'], ['', '', ''], ''],
    ['leading whitespace does not release the token', ['  ', 'NO_REPLY'], ['', ''], ''],
    [
      'a prefix of the token is held, then released whole once it cannot be',
      ['NO', ' problem'],
      ['', 'NO problem'],
      '',
    ],
    ['a longer word that only starts with the token is released', ['NO_REPLY', 'ING'], ['', 'NO_REPLYING'], ''],
    ['a reply that ends while it still looks like a prefix is released at the end', ['No'], [''], 'No'],
  ])('%s', (_name, deltas, released, atEnd) => {
    expect(run(deltas)).toEqual({ released, atEnd });
  });
});
