import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema';
import type { EntryRow } from '../../src/store/entry-row';
import { cancelledTurnsFrom, entriesInSeqRange, entrySeq } from '../../src/store/entries-repo';
import { cancelledTurnsIn, withoutCancelledTurns, type CancelledTurn } from '../../src/context/cancelled-turns';
import type { PlanEntry } from '../../src/compaction/types';
import type { AgentMessage } from '../../src/context/types';
import { summaryMessage } from '../../src/context/active-context';

/**
 * The model-visible message of a stored entry (as `activeMessages` renders it), or undefined for
 * headers, custom data, compactions and branch summaries, which are never summarized.
 */
export function planMessageOf(row: Pick<EntryRow, 'payload'>): AgentMessage | undefined {
  const entry = row.payload;
  if (entry.type === 'message') return entry.message;
  if (entry.type === 'custom_message') return { role: 'user', content: entry.content };
  return undefined;
}

/**
 * Stored rows as plan entries, skipping rows that carry no message and the rows of cancelled turns
 * (marked among `rows`, or in `cancelled`): no summary is made of what was cancelled.
 */
export function toPlanEntries(rows: readonly EntryRow[], cancelled: readonly CancelledTurn[] = []): PlanEntry[] {
  const out: PlanEntry[] = [];
  const marked = [...cancelled, ...cancelledTurnsIn(rows.map((r) => ({ id: r.id, entry: r.payload })))];
  for (const row of withoutCancelledTurns(rows, marked)) {
    const message = planMessageOf(row);
    if (message) out.push({ id: row.id, message });
  }
  return out;
}

/** The stored token estimates of rows, summed (a row without one counts 0). */
export function rowTokens(rows: readonly Pick<EntryRow, 'token_estimate'>[]): number {
  return rows.reduce((sum, r) => sum + (r.token_estimate ?? 0), 0);
}

/** Estimated tokens of the message that stands in for compaction `compactionId`'s summary (`summaryMessage`). */
export function summaryTokens(
  estimate: (message: AgentMessage) => number,
  compactionId: string,
  summary: string,
): number {
  return estimate(
    summaryMessage({
      type: 'compaction',
      id: compactionId,
      parentId: null,
      timestamp: '',
      summary,
      firstKeptEntryId: '',
      tokensBefore: 0,
    }),
  );
}

/** An entry id named by a plan no longer exists: the plan is stale (non-retryable). */
export class PlannedEntryMissingError extends Error {
  override readonly name = 'PlannedEntryMissingError';
  constructor(
    readonly sessionId: string,
    readonly entryId: string,
  ) {
    super(
      `entry ${entryId} of session ${sessionId} named by the compaction plan was not found; start a new compaction`,
    );
  }
}

/**
 * The message entries from `firstEntryId` to `lastEntryId` inclusive, in order (claim check: a
 * workflow names a chunk by its first and last entry, the activity reads it). Two id probes and
 * one index range read.
 */
export async function loadEntryRange(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  firstEntryId: string,
  lastEntryId: string,
): Promise<PlanEntry[]> {
  const seqOf = async (id: string): Promise<number> => {
    const seq = await entrySeq(db, agentId, sessionId, id);
    if (seq === undefined) throw new PlannedEntryMissingError(sessionId, id);
    return seq;
  };
  const [from, to] = await Promise.all([seqOf(firstEntryId), seqOf(lastEntryId)]);
  // A cancelled turn inside the range is marked after it, maybe past the range's end.
  const [rows, cancelled] = await Promise.all([
    entriesInSeqRange(db, agentId, sessionId, { from, to }),
    cancelledTurnsFrom(db, agentId, sessionId, from),
  ]);
  return toPlanEntries(rows, cancelled);
}
