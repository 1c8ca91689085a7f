import { identifierCharBudget, leftOutNote, newestIdentifiersWithin } from '../../src/compaction/identifier-budget';
import { sourceIdentifiers } from '../../src/compaction/message-identifiers';
import { PRESERVED_IDENTIFIERS_HEADING, preservedIdentifiersOf } from '../../src/compaction/quality-guard';

describe('identifierCharBudget', () => {
  it.each([
    [200_000, 80_000], // 10% of the window, at ~4 characters a token
    [40_000, 16_000],
    [1_000, 1_000], // a floor keeps a few identifiers on tiny windows
  ])('window %i tokens → %i characters', (window, chars) => {
    expect(identifierCharBudget(window)).toBe(chars);
  });
});

describe('newestIdentifiersWithin', () => {
  const ids = Array.from({ length: 10 }, (_, i) => `id-${i}`); // 4 characters each, 7 listed ("- id-0\n")

  it('keeps everything that fits, in order', () => {
    expect(newestIdentifiersWithin(ids, 70)).toEqual({ kept: ids, leftOut: 0 });
    expect(newestIdentifiersWithin(ids, Infinity)).toEqual({ kept: ids, leftOut: 0 });
  });

  it('keeps the newest (the end of the list) and counts the older ones it left out', () => {
    expect(newestIdentifiersWithin(ids, 69)).toEqual({ kept: ids.slice(1), leftOut: 1 });
    expect(newestIdentifiersWithin(ids, 21)).toEqual({ kept: ['id-7', 'id-8', 'id-9'], leftOut: 7 });
    expect(newestIdentifiersWithin(ids, 6)).toEqual({ kept: [], leftOut: 10 });
  });
});

describe('leftOutNote', () => {
  it('is not read back as an identifier by the next compaction', () => {
    const summary = `Goal: ship.\n\n${PRESERVED_IDENTIFIERS_HEADING}\n${leftOutNote(1234)}\n- /srv/app/main.ts\n`;
    expect(preservedIdentifiersOf(summary)).toEqual(['/srv/app/main.ts']);
    expect(sourceIdentifiers(summary, [], 'strict')).toEqual(['/srv/app/main.ts']);
  });
});
