import { WorkflowNotFoundError } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { KeelClient } from '../../client/keel-client';
import type { KeelSettings } from '../../config/agent-config';
import type { SessionStatus } from '../../protocol';
import type { Database } from '../../store/schema';
import { forKnownSession } from './session-errors';
import { sessionCompactionNote } from '../compactions/compactions';
import { sessionWindowNote } from './window-note';
import { sessionCompactionBillingLine } from '../compactions/compaction-billing';
import { listSessions } from './list-sessions';
import type { SessionStatusReport } from './session-views';
import { storedSessionStatus } from './stored-session-status';
import { sessionRecallLine } from './recall-line';

/** Runs `fn` on a database handle: the CLI opens one per call, the HTTP API keeps one open. */
export type WithDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => Promise<T>;

/**
 * The status of a session from its workflow, else from its row when the workflow never ran (an
 * imported session; UnknownSessionError when there is no row either), with the notes
 * and turn count read from the database. Those are best effort: an unreadable database must not hide
 * the status itself, so the compaction note then says why it is missing and the rest is left out.
 */
export async function sessionStatusReport(
  client: KeelClient,
  sessionKey: string,
  settings: KeelSettings,
  withDb: WithDb,
): Promise<SessionStatusReport> {
  const status = await forKnownSession(sessionKey, () => workflowOrStoredStatus(client, sessionKey, settings, withDb));
  const compactionNote = await withDb((db) => sessionCompactionNote(db, status.agentId, sessionKey)).catch(
    (err: unknown) => `compaction records unreadable: ${err instanceof Error ? err.message : String(err)}`,
  );
  const compactionBilling = await withDb((db) => sessionCompactionBillingLine(db, status.agentId, sessionKey)).catch(
    () => null,
  );
  const model = status.configuredContextWindow !== undefined ? status.model : undefined;
  const windowNote = model
    ? await withDb((db) => sessionWindowNote(db, status.agentId, sessionKey, model)).catch(() => null)
    : null;
  // The workflow's own counter spans resets; this one is what `keel sessions` shows.
  const turns = await withDb((db) => listSessions(db, settings, { agentId: status.agentId, sessionKey }))
    .then((found) => found[0]?.turns)
    .catch(() => undefined);
  const recall = await withDb((db) => sessionRecallLine(db, settings, status.agentId, sessionKey)).catch(() => null);
  // The view's arrays are its own copies (the workflow's status hands out readonly ones).
  const { uncollectedRequestIds, pendingApprovals, ...figures } = status;
  return {
    ...figures,
    ...(uncollectedRequestIds ? { uncollectedRequestIds: [...uncollectedRequestIds] } : {}),
    ...(pendingApprovals ? { pendingApprovals: [...pendingApprovals] } : {}),
    ...(turns !== undefined ? { turns } : {}),
    ...(recall ? { recall } : {}),
    ...(compactionNote ? { compactionNote } : {}),
    ...(compactionBilling ? { compactionBilling } : {}),
    ...(windowNote ? { windowNote } : {}),
  };
}

/** The workflow's status; a session with a row whose workflow never ran (imported) reads its row instead. */
async function workflowOrStoredStatus(
  client: KeelClient,
  sessionKey: string,
  settings: KeelSettings,
  withDb: WithDb,
): Promise<SessionStatus & { readonly workflowNote?: string }> {
  try {
    return await client.getStatus(sessionKey);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    const { agentId } = client.identify(sessionKey);
    const stored = await withDb((db) => storedSessionStatus(db, settings, agentId, sessionKey));
    if (!stored) throw err;
    return stored;
  }
}
