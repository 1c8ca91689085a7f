/**
 * What `keel compactions show` adds to a row: the summary itself, the range of the transcript it
 * covers, and how it differs from the session's previous summary.
 */
import type { Kysely } from 'kysely';
import type { CompactionRow, Database } from '../../store/schema';
import { lineDiff, type DiffLine } from './line-diff';
import { entrySeq } from '../../store/entries-repo';

/** What `keel compactions show` adds to the row: the summary, the range it replaced, the diff from the previous one. */
export interface CompactionDetail {
  /** The summary the compaction wrote (null while running or when it failed). */
  readonly summary: string | null;
  /** Entries the summary replaced: those before the first kept entry, after the previous compaction's. */
  readonly entriesSummarized: number | null;
  /** The session's previous successful compaction (same transcript), if any. */
  readonly previousCompactionId: string | null;
  /** Line diff from the previous summary (null without one of the two summaries). */
  readonly diff: DiffLine[] | null;
}

/** The summary a compaction wrote: its entry's, or, for a rerun that was not applied, its row's. */
export async function summaryOf(
  db: Kysely<Database>,
  row: Pick<CompactionRow, 'agent_id' | 'session_id' | 'entry_id' | 'summary'>,
): Promise<string | null> {
  if (!row.entry_id) return row.summary;
  const entry = await db
    .selectFrom('transcript_entries')
    .select(['agent_id', 'session_id', 'id', 'payload'])
    .where('agent_id', '=', row.agent_id)
    .where('session_id', '=', row.session_id)
    .where('id', '=', row.entry_id)
    .executeTakeFirst();
  const summary = (entry?.payload as { summary?: unknown } | undefined)?.summary;
  return typeof summary === 'string' ? summary : null;
}

async function seqOf(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  id: string | null,
): Promise<number | null> {
  return id ? ((await entrySeq(db, agentId, sessionId, id)) ?? null) : null;
}

/** The detail of one compaction row, read from its entries. */
export async function compactionDetail(db: Kysely<Database>, row: CompactionRow): Promise<CompactionDetail> {
  const summary = await summaryOf(db, row);
  const previous = await db
    .selectFrom('compactions')
    .selectAll()
    .where('agent_id', '=', row.agent_id)
    .where('session_id', '=', row.session_id)
    .where('status', '=', 'succeeded')
    .where('entry_id', 'is not', null)
    .where('started_at', '<', row.started_at)
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  const previousSummary = previous ? await summaryOf(db, previous) : null;
  let entriesSummarized: number | null = null;
  const keptSeq = await seqOf(db, row.agent_id, row.session_id, row.first_kept_entry_id);
  if (keptSeq !== null) {
    const fromSeq = previous ? await seqOf(db, row.agent_id, row.session_id, previous.first_kept_entry_id) : null;
    let q = db
      .selectFrom('transcript_entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', row.agent_id)
      .where('session_id', '=', row.session_id)
      .where('type', '!=', 'compaction')
      .where('seq', '<', keptSeq);
    if (fromSeq !== null) q = q.where('seq', '>=', fromSeq);
    entriesSummarized = Number((await q.executeTakeFirstOrThrow()).n);
  }
  return {
    summary,
    entriesSummarized,
    previousCompactionId: previous?.id ?? null,
    diff: summary !== null && previousSummary !== null ? lineDiff(previousSummary, summary) : null,
  };
}
