/**
 * The session chart's data: the context each model call carried (its reported input, cached and
 * uncached), where compactions cut, and the calls whose context went without pruned tool output,
 * over the session's last entries.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import type { TranscriptEntry } from '../../context/types';
import type { ContextSeries } from './session-views';

/** Entries the chart reads at most, newest (a long session charts its recent part). */
const SERIES_ENTRIES = 2_000;

/** The chart's data for one session id. */
export async function contextSeries(db: Kysely<Database>, agentId: string, sessionId: string): Promise<ContextSeries> {
  const rows = await db
    .selectFrom('transcript_entries')
    .select(['agent_id', 'session_id', 'id', 'seq', 'payload'])
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where((eb) => eb.or([eb('role', '=', 'assistant'), eb('type', '=', 'compaction')]))
    .orderBy('seq', 'desc')
    .limit(SERIES_ENTRIES)
    .execute();
  const points: Array<{ seq: number; contextTokens: number }> = [];
  const compactions: Array<{ seq: number; tokensBefore: number }> = [];
  const prunes: ContextSeries['prunes'] = [];
  for (const row of rows.reverse()) {
    const entry = row.payload as TranscriptEntry;
    const seq = Number(row.seq);
    if (entry.type === 'compaction') compactions.push({ seq, tokensBefore: entry.tokensBefore });
    else if (entry.type === 'message' && entry.message.role === 'assistant' && entry.message.usage) {
      const u = entry.message.usage;
      const contextTokens = (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
      points.push({ seq, contextTokens });
      if (entry.message.pruned) prunes.push({ seq, contextTokens, ...entry.message.pruned });
    }
  }
  return { points, compactions, prunes };
}
