/**
 * The active window's rule, in one place for transcripts held in memory (the store applies the same
 * rule to rows: `loadActiveEntries`): after a compaction the model sees its summary, then the entries
 * from its first kept entry on; when that entry is not among them (a hard checkpoint names the
 * compaction itself) the window starts just past the compaction.
 */

/** Where the window starts in `entries` (oldest first), and the newest compaction's index when there is one. */
export interface ActiveWindowStart {
  readonly start: number;
  readonly compaction?: number;
}

/**
 * The active window of `entries`: `firstKeptOf` gives a compaction's first kept entry id and
 * undefined for every other entry. Without a compaction the window is the whole transcript.
 * @example activeWindowStart([{ id: 'a' }, { id: 'b' }, { id: 'c', kept: 'b' }], (e) => e.kept) // { start: 1, compaction: 2 }
 */
export function activeWindowStart<E extends { readonly id: string }>(
  entries: readonly E[],
  firstKeptOf: (entry: E) => string | undefined,
): ActiveWindowStart {
  for (let i = entries.length - 1; i >= 0; i--) {
    const firstKept = firstKeptOf(entries[i]!);
    if (firstKept === undefined) continue;
    const kept = entries.findIndex((e) => e.id === firstKept);
    return { start: kept >= 0 ? kept : i + 1, compaction: i };
  }
  return { start: 0 };
}
