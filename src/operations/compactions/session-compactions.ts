/** A session's compactions with their summaries and what each kept: the console's compaction list. */
import type { z } from 'zod';
import { keptBySummary } from '../../compaction/summary-kept';
import { summaryOf } from './compaction-detail';
import { toCompactionView, type CompactionStoreDeps } from './compactions';
import type { sessionCompactions as sessionCompactionsView } from './compaction-views';

/** Compactions a session view lists at most, newest first. */
const SESSION_COMPACTIONS_LIMIT = 50;

/** `GET /v1/sessions/{sessionKey}/compactions`: the session's compactions with their summaries. */
export type SessionCompactions = z.infer<typeof sessionCompactionsView>;

/** The session's newest compactions (at most 50), each with its summary and what the summary kept. */
export async function sessionCompactions(
  deps: CompactionStoreDeps,
  input: { readonly agentId: string; readonly sessionKey: string },
): Promise<SessionCompactions> {
  const rows = await deps.db
    .selectFrom('compactions')
    .selectAll()
    .where('agent_id', '=', input.agentId)
    .where('session_key', '=', input.sessionKey)
    .orderBy('started_at', 'desc')
    .orderBy('id')
    .limit(SESSION_COMPACTIONS_LIMIT)
    .execute();
  const compactions = await Promise.all(
    rows.map(async (row) => {
      const summary = await summaryOf(deps.db, row);
      const kept = summary === null ? null : keptBySummary(summary);
      return {
        ...toCompactionView(row),
        summary,
        kept: kept && { identifiers: [...kept.identifiers], decisions: [...kept.decisions] },
      };
    }),
  );
  return { compactions };
}
