import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { loadActiveEntries } from '../store/entries-repo';
import { getSession, settleImportedSessionRow } from '../store/sessions-repo';
import { activeMessages } from '../context/active-context';
import { estimateTokens } from '../context/estimate-tokens';
import { evaluateFreshness, type SessionResetPolicyInput, type StaleReason } from '../sessions/lifecycle';

/** What an import found of one session it created or found: its context, and whether it carries on. */
export interface ImportedSessionState {
  /** Estimated tokens of the conversation its next turn loads (set on a session this import created). */
  contextTokens?: number;
  /**
   * `fresh`: its next message carries on with this context. `resets`: the agent's reset policy has
   * expired it, so its next message starts a new transcript without it (`resetReason` says which).
   * `kept`: it was expired and `keepContext` marked it fresh as of the import.
   */
  freshness: 'fresh' | 'resets' | 'kept';
  resetReason?: StaleReason;
}

export interface SettleImportedSessionInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** The session was created by this import (its context figure is computed); else it existed. */
  readonly created: boolean;
  readonly policy: SessionResetPolicyInput;
  /** Mark an expired session fresh as of `now`, so its next message carries on with its context. */
  readonly keepContext: boolean;
  readonly now: Date;
}

/**
 * Makes an imported session one a turn carries on: its context figure from the stored active window
 * (`keel sessions` and `keel status` show it before any turn), and its freshness under the agent's
 * reset policy as a message sent now would find it. Leaves a key whose current transcript is no
 * longer `sessionId` as it is; returns undefined for it.
 */
export async function settleImportedSession(
  db: Kysely<Database>,
  input: SettleImportedSessionInput,
): Promise<ImportedSessionState | undefined> {
  const row = await getSession(db, input.agentId, input.sessionKey);
  if (!row || row.session_id !== input.sessionId) return undefined;
  const contextTokens = input.created ? await activeContextTokens(db, input.agentId, input.sessionId) : undefined;
  const freshness = evaluateFreshness(
    { sessionStartedAt: row.session_started_at, lastInteractionAt: row.last_interaction_at },
    { now: input.now, policy: input.policy },
  );
  const keep = !freshness.fresh && input.keepContext;
  await settleImportedSessionRow(db, {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    ...(contextTokens !== undefined ? { contextTokens } : {}),
    ...(keep ? { freshAt: input.now } : {}),
  });
  const state: ImportedSessionState = { ...(contextTokens !== undefined ? { contextTokens } : {}), freshness: 'fresh' };
  if (freshness.fresh) return state;
  return {
    ...state,
    freshness: keep ? 'kept' : 'resets',
    ...(freshness.reason ? { resetReason: freshness.reason } : {}),
  };
}

/** The estimated tokens of the messages a turn would load now (since the last compaction, its summary included). */
async function activeContextTokens(db: Kysely<Database>, agentId: string, sessionId: string): Promise<number> {
  const { compaction, rows, summarized } = await loadActiveEntries(db, agentId, sessionId);
  const messages = activeMessages(
    compaction,
    rows.map((r) => ({ id: r.id, entry: r.payload })),
    summarized,
  );
  return messages.reduce((sum, message) => sum + estimateTokens(message), 0);
}
