/**
 * A Pi/OpenClaw transcript is a tree: each entry names its parent, and going back to an earlier
 * entry and writing on from there starts a branch. The conversation is the path from the leaf (the
 * last entry written, which is where OpenClaw carries on) back to the root; the other branches are
 * abandoned. This tracks a file's tree while its entries stream by and then names the abandoned ones.
 */

/** Entries a file may have for its tree to be traced; past this the import says it kept every branch. */
export const MAX_TRACED_ENTRIES = 1_000_000;

/** What tracing a file's tree found. */
export type BranchOutcome =
  /** One line of entries, or no tree to trace: every entry is in the conversation. */
  | { readonly kind: 'linear' }
  /** The entries off the path from `leafId` to the root, in file order. */
  | { readonly kind: 'branched'; readonly leafId: string; readonly offBranch: readonly string[] }
  /** The file could not be traced; every entry is kept in the conversation, and `why` says so. */
  | { readonly kind: 'untraced'; readonly why: string };

/** Follows one file's entries in order; `outcome()` once they are all added. */
export class BranchTracker {
  private readonly parentOf = new Map<string, string | null>();
  private readonly order: string[] = [];
  private readonly childCount = new Map<string, number>();
  private notATree: string | undefined;
  private overflowed = false;

  /**
   * One entry, in file order. `parentId` undefined is a linear (version 1) entry. A null parent after
   * the first entry (Keel writes compaction entries so) continues from the entry before it.
   */
  add(id: string, parentId: string | null | undefined): void {
    if (this.notATree !== undefined || this.overflowed) return;
    if (this.order.length >= MAX_TRACED_ENTRIES) {
      this.overflowed = true;
      return;
    }
    if (parentId === undefined) {
      this.notATree = 'entries without a parentId (a linear transcript)';
      return;
    }
    const previous = this.order.at(-1);
    const parent = parentId ?? previous ?? null;
    if (parent !== null && !this.parentOf.has(parent)) {
      this.notATree = `entry ${id} names parent ${parent}, which comes after it or is not in the file`;
      return;
    }
    if (this.parentOf.has(id)) return;
    this.parentOf.set(id, parent);
    this.order.push(id);
    if (parent !== null) this.childCount.set(parent, (this.childCount.get(parent) ?? 0) + 1);
  }

  /** What the file's tree says: linear, branched (with the entries left off), or not traceable. */
  outcome(): BranchOutcome {
    if (this.overflowed)
      return {
        kind: 'untraced',
        why: `over ${MAX_TRACED_ENTRIES.toLocaleString('en-US')} entries: every branch is kept in the conversation`,
      };
    const branches = [...this.childCount.values()].some((n) => n > 1);
    if (this.notATree !== undefined || !branches) return { kind: 'linear' };
    const leafId = this.order.at(-1)!;
    const onPath = new Set<string>();
    for (let at: string | null = leafId; at !== null; at = this.parentOf.get(at) ?? null) onPath.add(at);
    return { kind: 'branched', leafId, offBranch: this.order.filter((id) => !onPath.has(id)) };
  }
}
