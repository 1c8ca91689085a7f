import { BranchTracker } from '../../src/transfer/active-branch';

const traced = (entries: ReadonlyArray<readonly [string, string | null | undefined]>) => {
  const tree = new BranchTracker();
  for (const [id, parent] of entries) tree.add(id, parent);
  return tree.outcome();
};

describe('BranchTracker', () => {
  it('leaves a chain of entries whole', () => {
    expect(
      traced([
        ['a', null],
        ['b', 'a'],
        ['c', 'b'],
      ]),
    ).toEqual({ kind: 'linear' });
  });

  it('names the entries off the path from the last entry to the root, in file order', () => {
    // a ─ b ─┬─ c ─ d          (left: c, d)
    //        └─ e ─┬─ f        (left: f)
    //              └─ g ← leaf
    const outcome = traced([
      ['a', null],
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
      ['e', 'b'],
      ['f', 'e'],
      ['g', 'e'],
    ]);
    expect(outcome).toEqual({ kind: 'branched', leafId: 'g', offBranch: ['c', 'd', 'f'] });
  });

  it('carries on a branch the author went back to, leaving the newer one', () => {
    const outcome = traced([
      ['a', null],
      ['b', 'a'],
      ['c', 'a'],
      ['d', 'b'],
    ]);
    expect(outcome).toEqual({ kind: 'branched', leafId: 'd', offBranch: ['c'] });
  });

  it('reads a null parent after the first entry as the entry before it (Keel writes compactions so)', () => {
    const outcome = traced([
      ['a', null],
      ['b', 'a'],
      ['x', 'a'],
      ['compaction', null],
      ['c', 'compaction'],
    ]);
    expect(outcome).toEqual({ kind: 'branched', leafId: 'c', offBranch: ['b'] });
  });

  it('keeps every entry when the file is no tree: no parentIds, or a parent it does not hold', () => {
    expect(
      traced([
        ['a', undefined],
        ['b', undefined],
        ['c', undefined],
      ]),
    ).toEqual({ kind: 'linear' });
    expect(
      traced([
        ['a', null],
        ['b', 'a'],
        ['c', 'a'],
        ['d', 'elsewhere'],
      ]),
    ).toEqual({ kind: 'linear' });
    // A parent that only comes later is not a tree either.
    expect(
      traced([
        ['a', null],
        ['b', 'c'],
        ['c', 'a'],
        ['d', 'a'],
      ]),
    ).toEqual({ kind: 'linear' });
  });

  it('counts an entry written twice once', () => {
    expect(
      traced([
        ['a', null],
        ['b', 'a'],
        ['b', 'a'],
        ['c', 'b'],
      ]),
    ).toEqual({ kind: 'linear' });
  });
});
