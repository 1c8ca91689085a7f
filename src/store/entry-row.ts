import type { Selectable } from 'kysely';
import type { TranscriptEntry } from '../context/types';
import type { TranscriptEntriesTable } from './schema';

/**
 * Transcript rows typed by their `type`: a row's payload is decoded once, here, as the repositories
 * read it, so readers narrow `row.type` and get the entry without casting the JSON. The check is
 * cheap (the payload's own `type` against the column's), never a schema parse: a turn reads windows
 * of thousands of rows. Entries of kinds Keel does not know (kept verbatim on import) pass as they
 * always have: readers look at their `type` and skip or render them generically.
 */

/** A `transcript_entries` row as the driver returns it: its payload untyped JSON. */
type StoredEntryRow = Selectable<TranscriptEntriesTable>;

/** The transcript entry kinds, by their `type`. */
export type EntryType = TranscriptEntry['type'];

/** The columns a decoded row needs: its kind and its payload (as stored, or decoded already). */
interface Decodable {
  type: string;
  payload: unknown;
}

/** Row `R` with its payload typed as the entry kind `K` names (distributed over a union of kinds). */
export type TypedRow<R, K extends EntryType = EntryType> = K extends EntryType
  ? Omit<R, 'type' | 'payload'> & { type: K; payload: Extract<TranscriptEntry, { type: K }> }
  : never;

/** A whole transcript row, typed by its `type`: narrowing `row.type` narrows `row.payload`. */
export type EntryRow = TypedRow<StoredEntryRow>;

/** A transcript row of one kind (`EntryRowOf<'compaction'>`: a compaction entry's row). */
export type EntryRowOf<K extends EntryType> = TypedRow<StoredEntryRow, K>;

/** Thrown when a row's payload is not the entry its `type` column names (a row written by hand). */
export class EntryRowDecodeError extends Error {
  override readonly name = 'EntryRowDecodeError';
}

/** Types one row's payload by its `type`, after checking the payload says the same kind. */
export function decodeEntryRow<R extends Decodable>(row: R): TypedRow<R> {
  if (isEntryRow(row)) return row;
  throw kindMismatch(row);
}

/** {@link decodeEntryRow} over rows, in place of the untyped array (no copy). */
export function decodeEntryRows<R extends Decodable>(rows: R[]): TypedRow<R>[] {
  if (rows.every(isEntryRow)) return rows;
  throw kindMismatch(rows.find((row) => !isEntryRow(row))!);
}

/** True when the row's payload is the entry its `type` column names: the whole check, no schema parse. */
function isEntryRow<R extends Decodable>(row: R): row is R & TypedRow<R> {
  return (row.payload as { type?: unknown } | null)?.type === row.type;
}

function kindMismatch(row: Decodable): EntryRowDecodeError {
  const kind = (row.payload as { type?: unknown } | null)?.type;
  const id = (row as Partial<Pick<StoredEntryRow, 'id'>>).id ?? '?';
  return new EntryRowDecodeError(
    `transcript entry ${id}: its type column says ${row.type} but its payload's type is ${String(kind)}; the row was not written by Keel (repair it or remove it)`,
  );
}

/** Types a row read by a query that selected one kind only (`where type = …`); throws when it is another. */
export function decodeEntryRowOf<K extends EntryType, R extends Decodable>(type: K, row: R): TypedRow<R, K> {
  const decoded = decodeEntryRow(row);
  if (decoded.type !== type)
    throw new EntryRowDecodeError(
      `transcript entry ${(row as Partial<Pick<StoredEntryRow, 'id'>>).id ?? '?'} is a ${decoded.type} entry, not the ${type} entry expected`,
    );
  return decoded as TypedRow<R, K>;
}
