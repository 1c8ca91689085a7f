/** A session's model: shown, overridden or cleared (`keel session model`). */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import { agentConfig, type KeelSettings } from '../../config/agent-config';
import { getSession, setModelOverride } from '../../store/sessions-repo';
import { parseSessionKey } from '../../sessions/session-key';
import { UnknownSessionError } from '../errors';
import { shownKey } from '../shown-key';

/** The model the session's turns call and whether it is an override. */
export interface SessionModelReport {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly model: string;
  /** The session's own model (null: it follows its agent's). */
  readonly override: string | null;
}

/** Which session, and what to do: set `model`, `clear` the override, or neither (show it). */
export interface SessionModelInput {
  readonly sessionKey: string;
  readonly model?: string | undefined;
  readonly clear: boolean;
  /** The agent, when the key does not name one. */
  readonly defaultAgentId?: string | undefined;
}

/**
 * Shows, sets or clears the session's model override. The session must exist (a typo never
 * creates one); the next turn uses the change.
 */
export async function sessionModel(
  deps: { readonly db: Kysely<Database>; readonly settings: KeelSettings },
  input: SessionModelInput,
): Promise<SessionModelReport> {
  const agentId = parseSessionKey(input.sessionKey).agentId ?? input.defaultAgentId ?? 'main';
  const unknown = () =>
    new UnknownSessionError(
      input.sessionKey,
      `no session ${shownKey(input.sessionKey)} for agent ${agentId}; send it a message first (nothing was created)`,
    );
  if (input.model !== undefined || input.clear) {
    const changed = await setModelOverride(deps.db, agentId, input.sessionKey, input.clear ? null : input.model!);
    if (!changed) throw unknown();
  }
  const session = await getSession(deps.db, agentId, input.sessionKey);
  if (!session) throw unknown();
  const override = session.model_override;
  return {
    agentId,
    sessionKey: input.sessionKey,
    model: override ?? agentConfig(deps.settings, agentId).model,
    override,
  };
}
