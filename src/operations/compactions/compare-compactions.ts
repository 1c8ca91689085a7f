/**
 * Two summaries compared: each compaction with its summary, and the identifier coverage of each: the
 * protected identifiers of the summarized range(s), how many each summary kept verbatim, and the ones
 * only one of them kept.
 */
import type { Kysely } from 'kysely';
import { getCompaction } from '../../store/compactions-repo';
import { getEntry, MESSAGE_TYPES, restoresNoSummary, summarizedRangeOf } from '../../store/entries-repo';
import type { CompactionRow, Database } from '../../store/schema';
import { decodeEntryRows } from '../../store/entry-row';
import type { AgentMessage } from '../../context/types';
import { sourceIdentifiers } from '../../compaction/message-identifiers';
import { identifierCoverage, type IdentifierCoverage } from '../../compaction/summary-coverage';
import { CompactionEditRefusedError } from '../errors';
import { compactionRow, toCompactionView, type CompactionStoreDeps } from './compactions';
import { summaryOf } from './compaction-detail';
import type { CompactionView } from './compaction-views';

/** Both compactions with their summaries, and what each summary kept of the range's identifiers. */
export interface CompactionComparison {
  readonly a: CompactionView & { readonly summary: string };
  readonly b: CompactionView & { readonly summary: string };
  readonly coverage: IdentifierCoverage;
}

/** The message entries of the range a compaction's summary stands for (none for a revert to no summary). */
async function rangeMessages(db: Kysely<Database>, row: CompactionRow): Promise<AgentMessage[]> {
  let entryRow = row.entry_id ? await getEntry(db, row.agent_id, row.session_id, row.entry_id) : undefined;
  if (!entryRow && row.rerun_of) {
    const original = await getCompaction(db, row.agent_id, row.rerun_of);
    entryRow = original?.entry_id ? await getEntry(db, row.agent_id, row.session_id, original.entry_id) : undefined;
  }
  const entry = entryRow?.type === 'compaction' ? entryRow.payload : undefined;
  if (!entryRow || !entry || restoresNoSummary(entry)) return [];
  const rangeRow = entry.rangeOf ? await getEntry(db, row.agent_id, row.session_id, entry.rangeOf) : entryRow;
  const range =
    rangeRow?.type === 'compaction' ? await summarizedRangeOf(db, row.agent_id, row.session_id, rangeRow) : undefined;
  if (!range) return [];
  const seqOf = async (id: string) => Number((await getEntry(db, row.agent_id, row.session_id, id))?.seq ?? 0);
  const rows = await db
    .selectFrom('transcript_entries')
    // The key columns with the payload: a value sealed at rest opens only in its own row.
    .select(['agent_id', 'session_id', 'id', 'type', 'payload'])
    .where('agent_id', '=', row.agent_id)
    .where('session_id', '=', row.session_id)
    .where('seq', '>=', await seqOf(range.firstEntryId))
    .where('seq', '<=', await seqOf(range.lastEntryId))
    .where('type', 'in', MESSAGE_TYPES)
    .orderBy('seq', 'asc')
    .execute();
  return decodeEntryRows(rows).flatMap((r): AgentMessage[] => {
    const e = r.payload;
    if (e.type === 'message') return [e.message];
    if (e.type === 'custom_message') return [{ role: 'user', content: e.content }];
    return [];
  });
}

/** Compares the summaries of compactions `a` and `b` of the agent (e.g. a compaction and its rerun). */
export async function compareCompactions(
  deps: CompactionStoreDeps,
  input: { readonly agentId: string; readonly a: string; readonly b: string },
): Promise<CompactionComparison> {
  const side = async (id: string) => {
    const row = await compactionRow(deps.db, { agentId: input.agentId, id });
    const summary = await summaryOf(deps.db, row);
    if (summary === null)
      throw new CompactionEditRefusedError(`compaction ${id} has no summary to compare (status ${row.status})`);
    return { row, summary };
  };
  const [a, b] = [await side(input.a), await side(input.b)];
  const messagesA = await rangeMessages(deps.db, a.row);
  const messagesB =
    a.row.entry_id === b.row.entry_id && a.row.rerun_of === b.row.rerun_of
      ? messagesA
      : await rangeMessages(deps.db, b.row);
  const identifiers = [
    ...new Set([
      ...sourceIdentifiers(undefined, messagesA, 'strict'),
      ...sourceIdentifiers(undefined, messagesB, 'strict'),
    ]),
  ];
  return {
    a: { ...toCompactionView(a.row), summary: a.summary },
    b: { ...toCompactionView(b.row), summary: b.summary },
    coverage: identifierCoverage(identifiers, a.summary, b.summary),
  };
}
