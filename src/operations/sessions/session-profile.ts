/**
 * A stored session's profile (`keel profile`): how its work looks (tool-heavy, long answers…) and
 * the settings that would suit it, from every entry of its current transcript.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import { agentConfig, type KeelSettings } from '../../config/agent-config';
import { configuredWindow } from '../../config/configured-window';
import { getSession } from '../../store/sessions-repo';
import { entriesAfter } from '../../store/entries-repo';
import { parseSessionKey } from '../../sessions/session-key';
import { toProfileEntry, type ProfileEntry } from '../../profile/profile-entries';
import { boundedEstimate } from '../../runtime/bounded-estimate';
import { profileSession, type SessionProfile } from '../../profile/session-profile';
import type { PromptOverhead } from '../../context/context-split';
import { UnknownSessionError } from '../errors';
import { shownKey } from '../shown-key';

/** Entries read per statement: a long transcript is read in pages. */
const PAGE_ROWS = 1_000;

/** The profile of the session's current transcript (all of it: compacted entries count as evidence). */
export async function profileStoredSession(
  db: Kysely<Database>,
  settings: KeelSettings,
  opts: { sessionKey: string; defaultAgentId?: string; overhead?: PromptOverhead },
): Promise<SessionProfile> {
  const agentId = parseSessionKey(opts.sessionKey).agentId ?? opts.defaultAgentId ?? 'main';
  const session = await getSession(db, agentId, opts.sessionKey);
  if (!session)
    throw new UnknownSessionError(
      opts.sessionKey,
      `no session ${shownKey(opts.sessionKey)} for agent ${agentId}; keel sessions lists them`,
    );
  const entries: ProfileEntry[] = [];
  for (let after = -1; ;) {
    const rows = await entriesAfter(db, agentId, session.session_id, after, PAGE_ROWS);
    for (const row of rows) {
      const entry = toProfileEntry(row.payload, row.token_estimate, boundedEstimate);
      if (entry) entries.push(entry);
    }
    if (rows.length < PAGE_ROWS) break;
    after = Number(rows[rows.length - 1]!.seq);
  }
  const config = agentConfig(settings, agentId);
  return profileSession({
    agentId,
    sessionKey: opts.sessionKey,
    sessionId: session.session_id,
    entries,
    config,
    window: configuredWindow(config).tokens,
    ...(opts.overhead ? { overhead: opts.overhead } : {}),
  });
}
