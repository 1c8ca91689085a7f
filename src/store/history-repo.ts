import type { Kysely } from 'kysely';
import type { Database } from './schema';
import { decodeEntryRowOf, decodeEntryRows, type EntryRow } from './entry-row';
import { MESSAGE_TYPES } from './entries-repo';

/**
 * Reads behind `history_search` and `history_expand`: the transcript of one session key, every
 * compaction epoch and every session id of it that the store can name. Always scoped by agent id.
 */

/** A compaction of a session and the seq range it summarized (`[fromSeq, toSeq)`). */
export interface CompactionSpan {
  readonly id: string;
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** Every compaction of a session in order, with the range each summarized. */
export async function compactionSpans(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
): Promise<CompactionSpan[]> {
  const rows = await db
    .selectFrom('transcript_entries')
    .select(['id', 'seq', 'type', 'payload'])
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('type', '=', 'compaction')
    .orderBy('seq', 'asc')
    .execute()
    .then((stored) => stored.map((r) => decodeEntryRowOf('compaction', r)));
  const keptIds = rows.map((r) => r.payload.firstKeptEntryId).filter((id) => id !== undefined);
  const kept =
    keptIds.length === 0
      ? []
      : await db
          .selectFrom('transcript_entries')
          .select(['id', 'seq'])
          .where('agent_id', '=', agentId)
          .where('session_id', '=', sessionId)
          .where('id', 'in', keptIds)
          .execute();
  const seqOf = new Map(kept.map((k) => [k.id, Number(k.seq)]));
  const spans: CompactionSpan[] = [];
  let fromSeq = 0;
  for (const r of rows) {
    const entry = r.payload;
    const toSeq = seqOf.get(entry.firstKeptEntryId) ?? Number(r.seq);
    if (entry.revertOf !== undefined || entry.rangeOf !== undefined) {
      // A revert or an applied rerun stands for an earlier compaction's range (none: it restored no summary).
      const same = entry.rangeOf !== undefined ? spans.find((s) => s.id === entry.rangeOf) : undefined;
      spans.push({ id: r.id, fromSeq: same?.fromSeq ?? toSeq, toSeq: same?.toSeq ?? toSeq });
    } else spans.push({ id: r.id, fromSeq: Math.min(fromSeq, toSeq), toSeq });
    fromSeq = toSeq;
  }
  return spans;
}

/** The model-visible entries of a session in `[fromSeq, toSeq)`, oldest first, at most `limit`. */
export async function messagesInRange(
  db: Kysely<Database>,
  input: { agentId: string; sessionId: string; fromSeq: number; toSeq: number; limit: number },
): Promise<EntryRow[]> {
  const rows = await db
    .selectFrom('transcript_entries')
    .selectAll()
    .where('agent_id', '=', input.agentId)
    .where('session_id', '=', input.sessionId)
    .where('seq', '>=', input.fromSeq)
    .where('seq', '<', input.toSeq)
    .where('type', 'in', MESSAGE_TYPES)
    .orderBy('seq', 'asc')
    .limit(input.limit)
    .execute();
  return decodeEntryRows(rows);
}

/** The seq range of `before` model-visible entries before `seq` through `after` after it (inclusive of it). */
export async function rangeAround(
  db: Kysely<Database>,
  input: { agentId: string; sessionId: string; seq: number; before: number; after: number },
): Promise<{ fromSeq: number; toSeq: number }> {
  const base = db
    .selectFrom('transcript_entries')
    .select('seq')
    .where('agent_id', '=', input.agentId)
    .where('session_id', '=', input.sessionId)
    .where('type', 'in', MESSAGE_TYPES);
  const earlier = await base
    .where('seq', '<', input.seq)
    .orderBy('seq', 'desc')
    .offset(Math.max(0, input.before - 1))
    .limit(1)
    .executeTakeFirst();
  const later = await base
    .where('seq', '>', input.seq)
    .orderBy('seq', 'asc')
    .offset(Math.max(0, input.after - 1))
    .limit(1)
    .executeTakeFirst();
  const fromSeq = input.before === 0 ? input.seq : earlier ? Number(earlier.seq) : 0;
  const toSeq =
    input.after === 0 || !later ? (input.after === 0 ? input.seq + 1 : Number.MAX_SAFE_INTEGER) : Number(later.seq) + 1;
  return { fromSeq, toSeq };
}
