import type { Kysely } from 'kysely';
import type { CompactionRow, Database } from './schema';
import type { EntryRowOf } from './entry-row';
import {
  compactionBefore,
  getEntry,
  lastCompaction,
  restoresNoSummary,
  summarizedRangeOf,
  type SummarizedRange,
} from './entries-repo';
import { getCompaction, type RestoredWindow } from './compactions-repo';
import { getSession } from './sessions-repo';

/**
 * What a revert restores and what a rerun summarizes again, resolved from the transcript: the window
 * in force before a compaction is the one its previous compaction entry set (nothing is deleted, so
 * every earlier window can be named again).
 */

/** A revert or rerun that cannot be done; the message says why and what to do instead. */
export class CompactionEditError extends Error {
  override readonly name = 'CompactionEditError';
}

/** The compaction row an edit names, with its entry in the session's current transcript. */
interface EditedCompaction {
  readonly row: CompactionRow;
  readonly entryRow: EntryRowOf<'compaction'>;
  readonly entry: EntryRowOf<'compaction'>['payload'];
}

async function editedCompaction(
  db: Kysely<Database>,
  agentId: string,
  id: string,
  verb: string,
): Promise<EditedCompaction> {
  const row = await getCompaction(db, agentId, id);
  if (!row)
    throw new CompactionEditError(
      `no compaction ${id} for agent ${agentId}; list them with \`keel compactions --agent ${agentId}\``,
    );
  if (!row.entry_id) {
    const why = row.rerun_of
      ? 'it is a rerun that was not applied (rerun it again with --apply to use it)'
      : `its status is ${row.status}`;
    throw new CompactionEditError(`compaction ${id} wrote no entry to ${verb}: ${why}`);
  }
  const session = await getSession(db, agentId, row.session_key);
  if (session?.session_id !== row.session_id) {
    throw new CompactionEditError(
      `compaction ${id} belongs to session id ${row.session_id}, and ${row.session_key} has moved on to ${session?.session_id ?? 'no session'} (a reset or /new); only the current transcript's compactions can be edited`,
    );
  }
  const entryRow = await getEntry(db, agentId, row.session_id, row.entry_id);
  if (entryRow?.type !== 'compaction')
    throw new CompactionEditError(
      `compaction ${id}'s entry ${row.entry_id} is gone from the transcript (removed by maintenance?); nothing to ${verb}`,
    );
  return { row, entryRow, entry: entryRow.payload };
}

/** What reverting a compaction restores. */
export interface RevertPlan {
  readonly row: CompactionRow;
  readonly restored: RestoredWindow;
  /** Compactions written after the reverted one: the restored window undoes them too. */
  readonly laterCompactions: number;
}

/**
 * The window from before compaction `id`: the previous compaction entry's summary, first kept entry
 * and range, or, before the session's first compaction, no summary and the whole transcript.
 */
export async function planRevert(db: Kysely<Database>, agentId: string, id: string): Promise<RevertPlan> {
  const { row, entryRow } = await editedCompaction(db, agentId, id, 'revert');
  const previous = await compactionBefore(db, agentId, row.session_id, entryRow);
  const prior = previous?.payload;
  let restored: RestoredWindow;
  if (!previous || !prior || restoresNoSummary(prior)) {
    const first = await db
      .selectFrom('transcript_entries')
      .select('id')
      .where('agent_id', '=', agentId)
      .where('session_id', '=', row.session_id)
      .orderBy('seq', 'asc')
      .limit(1)
      .executeTakeFirstOrThrow();
    restored = { summary: '', firstKeptEntryId: first.id };
  } else {
    if (
      prior.firstKeptEntryId !== previous.id &&
      !(await getEntry(db, agentId, row.session_id, prior.firstKeptEntryId))
    ) {
      throw new CompactionEditError(
        `the window before compaction ${id} started at entry ${prior.firstKeptEntryId}, which maintenance has removed; it cannot be restored`,
      );
    }
    restored = {
      summary: prior.summary,
      firstKeptEntryId: prior.firstKeptEntryId,
      rangeOf: prior.rangeOf ?? previous.id,
    };
  }
  const later = await db
    .selectFrom('transcript_entries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('agent_id', '=', agentId)
    .where('session_id', '=', row.session_id)
    .where('type', '=', 'compaction')
    .where('seq', '>', entryRow.seq)
    .executeTakeFirstOrThrow();
  return { row, restored, laterCompactions: Number(later.n) };
}

/** What rerunning a compaction summarizes: the range of the compaction that first summarized it. */
export interface RerunPlan {
  readonly row: CompactionRow;
  /** The compaction entry whose range is summarized (a rerun of an applied rerun goes back to the original). */
  readonly rangeOf: string;
  readonly range: SummarizedRange;
  /** The summary in force before that range was summarized (re-distilled with it, as the original was). */
  readonly previousSummary?: string;
  /** The original's first kept entry: an applied rerun keeps the same tail. */
  readonly firstKeptEntryId: string;
  /** Whether the session's window is this range's right now (only then can a rerun be applied). */
  readonly active: boolean;
}

export async function planRerun(db: Kysely<Database>, agentId: string, id: string): Promise<RerunPlan> {
  const { row, entryRow, entry } = await editedCompaction(db, agentId, id, 'rerun');
  if (entry.revertOf !== undefined) {
    throw new CompactionEditError(
      `compaction ${id} is a revert (of ${entry.revertOf}); it summarized nothing${entry.rangeOf ? `; rerun ${entry.rangeOf}, whose window it restored` : ''}`,
    );
  }
  const original = entry.rangeOf ? await getEntry(db, agentId, row.session_id, entry.rangeOf) : entryRow;
  if (original?.type !== 'compaction')
    throw new CompactionEditError(
      `compaction ${id} stands for ${entry.rangeOf ?? '?'}, whose entry is gone from the transcript`,
    );
  const range = await summarizedRangeOf(db, agentId, row.session_id, original);
  if (!range) throw new CompactionEditError(`compaction ${id} summarized no messages; nothing to rerun`);
  const before = await compactionBefore(db, agentId, row.session_id, original);
  const prior = before?.payload;
  const active = await lastCompaction(db, agentId, row.session_id);
  const activeEntry = active?.payload;
  return {
    row,
    rangeOf: original.id,
    range,
    ...(prior && !restoresNoSummary(prior) ? { previousSummary: prior.summary } : {}),
    firstKeptEntryId: original.payload.firstKeptEntryId,
    active:
      activeEntry !== undefined &&
      !restoresNoSummary(activeEntry) &&
      (activeEntry.rangeOf ?? active!.id) === original.id,
  };
}
