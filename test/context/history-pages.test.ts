import { decodeCursor, encodeCursor, fillPage, snippetAround, textTokens } from '../../src/context/history-pages';

describe('snippetAround', () => {
  const long = `${'a '.repeat(400)}the Glimmerfox code ${'b '.repeat(400)}`;

  it('centres on the first match of any word, case-insensitive, and marks both cuts', () => {
    const s = snippetAround(long, ['nothing', 'GLIMMERFOX'], 100);
    expect(s).toContain('the Glimmerfox code');
    expect(s.startsWith('…')).toBe(true);
    expect(s.endsWith('…')).toBe(true);
    expect(s.length).toBe(102);
  });

  it('shows the start when no word occurs, and a short text whole with whitespace folded', () => {
    expect(snippetAround(long, ['zzz'], 20)).toBe(`${'a '.repeat(10)}…`);
    expect(snippetAround('one\n\n two', ['two'])).toBe('one two');
  });

  it('keeps a full-width window when the match is near the end', () => {
    const s = snippetAround(`${'x'.repeat(500)} end`, ['end'], 50);
    expect(s).toBe(`…${'x'.repeat(46)} end`);
  });
});

describe('fillPage', () => {
  it('takes blocks in order while they fit the budget', () => {
    const blocks = ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)];
    expect(fillPage(blocks, 20)).toEqual({ texts: blocks.slice(0, 2), taken: 2 });
    expect(fillPage(blocks, 30)).toEqual({ texts: blocks, taken: 3 });
  });

  it('cuts a first block larger than the budget so paging always advances', () => {
    const page = fillPage(['z'.repeat(100), 'y'], 5);
    expect(page.taken).toBe(1);
    expect(page.texts[0]).toBe(`${'z'.repeat(20)}… [80 chars cut]`);
    expect(textTokens('abcde')).toBe(2);
  });
});

describe('expand cursors', () => {
  it('round-trip, and anything else is not a cursor', () => {
    const cursor = { sessionId: 's-1', fromSeq: 42, toSeq: 90 };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(decodeCursor('not a cursor')).toBeUndefined();
    expect(decodeCursor(Buffer.from('["s",1.5,2]').toString('base64url'))).toBeUndefined();
  });
});
