import { decodeEntryRow, decodeEntryRowOf, decodeEntryRows, EntryRowDecodeError } from '../../src/store/entry-row';

const row = (id: string, type: string, payloadType: string) => ({
  id,
  type,
  payload: { type: payloadType, id, parentId: null, timestamp: '2026-01-01T00:00:00.000Z' },
});

describe('decodeEntryRows', () => {
  it('types the rows in place: the same array, narrowed by each row type', () => {
    const rows = [row('a', 'message', 'message'), row('c', 'compaction', 'compaction')];
    const decoded = decodeEntryRows(rows);
    expect(decoded).toBe(rows);
    const kinds = decoded.map((r) => (r.type === 'compaction' ? `compaction ${r.payload.id}` : r.type));
    expect(kinds).toEqual(['message', 'compaction c']);
  });

  it('refuses the whole read at the first row whose payload is another kind, naming that row', () => {
    const rows = [row('a', 'message', 'message'), row('b', 'compaction', 'message'), row('c', 'custom', 'message')];
    expect(() => decodeEntryRows(rows)).toThrow(EntryRowDecodeError);
    expect(() => decodeEntryRows(rows)).toThrow(
      "transcript entry b: its type column says compaction but its payload's type is message",
    );
  });

  it('reads no rows as no rows', () => {
    expect(decodeEntryRows([])).toEqual([]);
  });
});

describe('decodeEntryRow', () => {
  it('names the row and both kinds, and a payload that is not an entry', () => {
    expect(() => decodeEntryRow({ id: 'x', type: 'message', payload: null })).toThrow(
      "transcript entry x: its type column says message but its payload's type is undefined",
    );
  });

  it('refuses another kind than the one a query selected', () => {
    expect(() => decodeEntryRowOf('compaction', row('m', 'message', 'message'))).toThrow(
      'transcript entry m is a message entry, not the compaction entry expected',
    );
  });
});
