/**
 * A turn its sender cancelled stays in the transcript, marked, and never reaches a model again: not
 * in a later turn's context, not in a summary. The marker is a `custom` entry appended after the
 * turn's entries (by the next turn's begin), naming the turn's first entry (its user message).
 */
import type { CustomEntry, TranscriptEntry } from './types';

/** The `customType` of the marker entry. */
export const TURN_CANCELLED = 'keel.turn_cancelled';

/** A marker: the cancelled turn's first entry, and the marker's own id (every entry of the turn is before it). */
export interface CancelledTurn {
  readonly firstEntryId: string;
  readonly markerId: string;
}

/** The marker entry for a cancelled turn. */
export function cancelledTurnEntry(
  markerId: string,
  parentId: string | null,
  firstEntryId: string,
  timestamp: string,
): CustomEntry {
  return { type: 'custom', id: markerId, parentId, timestamp, customType: TURN_CANCELLED, data: { firstEntryId } };
}

/** The cancelled turns `entries` mark. */
export function cancelledTurnsIn(
  entries: readonly { readonly id: string; readonly entry: TranscriptEntry }[],
): CancelledTurn[] {
  const out: CancelledTurn[] = [];
  for (const { id, entry } of entries) {
    if (entry.type !== 'custom' || entry.customType !== TURN_CANCELLED) continue;
    const first = (entry.data as { firstEntryId?: unknown } | undefined)?.firstEntryId;
    if (typeof first === 'string') out.push({ firstEntryId: first, markerId: id });
  }
  return out;
}

/**
 * `entries` without those of cancelled turns: from each turn's first entry up to its marker. The
 * same array when nothing is cancelled; a turn whose first entry is not among `entries` (summarized
 * earlier, or never written) leaves the rest as it is.
 */
export function withoutCancelledTurns<T extends { readonly id: string }>(
  entries: readonly T[],
  cancelled: readonly CancelledTurn[],
): readonly T[] {
  if (cancelled.length === 0) return entries;
  const endOf = new Map(cancelled.map((c) => [c.firstEntryId, c.markerId]));
  const out: T[] = [];
  let skippingTo: string | undefined;
  for (const e of entries) {
    if (skippingTo === undefined) skippingTo = endOf.get(e.id);
    if (skippingTo === undefined) out.push(e);
    else if (e.id === skippingTo) skippingTo = undefined;
  }
  return out;
}
