/**
 * A session's thinking level: shown, set or cleared (`/think` in the chat, `keel session thinking`,
 * `POST /v1/sessions/{key}/thinking`). The level is the session's `thinkingLevel` toggle; clear, the
 * agent's `thinkingLevel` applies. The session must exist: a typo never creates one.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import { getSession, setThinkingLevel } from '../../store/sessions-repo';
import { agentConfig, type KeelSettings } from '../../config/agent-config';
import { storedThinkingLevel, type ThinkingLevel } from '../../turn/thinking-level';
import { UnknownSessionError } from '../errors';
import { shownKey } from '../shown-key';

/** What the session's turns think at, and whether that is the session's own level or its agent's. */
export interface SessionThinkingReport {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly level: ThinkingLevel;
  readonly source: 'session' | 'agent';
}

/** Sets (`level`), clears (`null`) or only reads (`undefined`) the session's level, then reports the one in force. */
export async function sessionThinking(
  db: Kysely<Database>,
  settings: KeelSettings,
  input: { readonly agentId: string; readonly sessionKey: string; readonly level?: ThinkingLevel | null },
): Promise<SessionThinkingReport> {
  const { agentId, sessionKey } = input;
  const unknown = () =>
    new UnknownSessionError(
      sessionKey,
      `no session ${shownKey(sessionKey)} for agent ${agentId}; send it a message first (nothing was created)`,
    );
  if (input.level !== undefined && !(await setThinkingLevel(db, agentId, sessionKey, input.level))) throw unknown();
  const session = await getSession(db, agentId, sessionKey);
  if (!session) throw unknown();
  const own = storedThinkingLevel(session.toggles.thinkingLevel);
  return {
    agentId,
    sessionKey,
    level: own ?? agentConfig(settings, agentId).thinkingLevel,
    source: own ? 'session' : 'agent',
  };
}
