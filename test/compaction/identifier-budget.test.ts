import { createHash } from 'node:crypto';
import { estimateTokens } from '../../src/context/estimate-tokens';
import { DEFAULTS } from '../../src/config/defaults';
import { identifierCharBudget, leftOutNote, newestIdentifiersWithin } from '../../src/compaction/identifier-budget';
import { sourceIdentifiers } from '../../src/compaction/message-identifiers';
import { PRESERVED_IDENTIFIERS_HEADING, preservedIdentifiersOf } from '../../src/compaction/quality-guard';

describe('identifierCharBudget', () => {
  it.each([
    [200_000, 25_000], // 10% of the window, at the 1.25 characters a token of the densest identifiers
    [40_000, 5_000],
    [1_000, 1_000], // a floor keeps a few identifiers on tiny windows
  ])('window %i tokens → %i characters', (window, chars) => {
    expect(identifierCharBudget(window)).toBe(chars);
  });

  it.each<[string, (i: number) => string]>([
    [
      'UUIDs',
      (i) =>
        `${createHash('md5')
          .update(String(i))
          .digest('hex')
          .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-')}`,
    ],
    ['commit hashes', (i) => createHash('sha1').update(String(i)).digest('hex')],
    ['order numbers', (i) => `ORD-${100_000 + i * 37}`],
    ['paths', (i) => `/srv/app/orders/module-${i}.ts`],
  ])('a listing of %s that fills the budget takes at most its share of the window in Keel’s estimate', (_kind, id) => {
    const window = 200_000;
    const ids = Array.from({ length: 20_000 }, (_, i) => id(i));
    const { kept } = newestIdentifiersWithin(ids, identifierCharBudget(window));
    const listing = kept.map((x) => `- ${x}`).join('\n');
    expect(kept.length).toBeGreaterThan(500);
    expect(estimateTokens({ role: 'user', content: listing })).toBeLessThanOrEqual(
      window * DEFAULTS.maxIdentifierWindowShare,
    );
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
