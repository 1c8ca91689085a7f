import { activeWindowStart } from '../../src/context/active-window';

type Row = { readonly id: string; readonly kept?: string };
const keptOf = (e: Row) => e.kept;

describe('activeWindowStart', () => {
  it.each<[string, Row[], ReturnType<typeof activeWindowStart>]>([
    ['is the whole transcript without a compaction', [{ id: 'a' }, { id: 'b' }], { start: 0 }],
    [
      'starts at the first kept entry',
      [{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'k', kept: 'b' }, { id: 'd' }],
      { start: 1, compaction: 3 },
    ],
    [
      'follows the newest of several compactions',
      [{ id: 'a' }, { id: 'k1', kept: 'a' }, { id: 'b' }, { id: 'k2', kept: 'b' }, { id: 'c' }],
      { start: 2, compaction: 3 },
    ],
    [
      'starts just past a compaction whose kept entry is missing (a file that lacks it)',
      [{ id: 'a' }, { id: 'k', kept: 'gone' }, { id: 'b' }],
      { start: 2, compaction: 1 },
    ],
    [
      'starts at a hard checkpoint itself, which names its own id (it is no message)',
      [{ id: 'a' }, { id: 'k', kept: 'k' }, { id: 'b' }],
      { start: 1, compaction: 1 },
    ],
  ])('%s', (_, entries, expected) => {
    expect(activeWindowStart(entries, keptOf)).toEqual(expected);
  });
});
