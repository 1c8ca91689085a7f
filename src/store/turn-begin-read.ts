import type { Kysely } from 'kysely';
import type { Database, SessionRow } from './schema';
import { compiledOnce } from './compiled-once';
import { createSession, type EnsureSessionInput } from './sessions-repo';

/** What a turn's begin reads about a known session, in one statement. */
export interface SessionForTurn {
  readonly session: SessionRow;
  /** The context window learned for the model the session's turns call (its override, else the agent's model). */
  readonly learnedWindow: number | undefined;
  /** The transcript's last entry: the parent of the user's message. */
  readonly lastEntryId: string | undefined;
}

/**
 * The read a turn starts with, as one round trip: the session row, the window learned for its model,
 * and the transcript's last entry id; the same statement forgets the raw arguments of tool calls a
 * failed turn left behind (created before `releaseToolArgsBefore`: the session runs one turn at a time,
 * so every older row is abandoned, and this turn's rows are newer). PostgreSQL runs a data-modifying
 * WITH to completion whether or not the query reads it. Undefined when the session has no row yet.
 */
export async function readSessionForTurn(
  db: Kysely<Database>,
  input: { agentId: string; sessionKey: string; defaultModel: string; releaseToolArgsBefore: string },
): Promise<SessionForTurn | undefined> {
  const [row] = await beginRead(db, {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    defaultModel: input.defaultModel,
    releaseBefore: new Date(input.releaseToolArgsBefore),
  });
  if (!row) return undefined;
  const { learned_window, last_entry_id, ...session } = row;
  return { session, learnedWindow: learned_window ?? undefined, lastEntryId: last_entry_id ?? undefined };
}

/** The statement itself, compiled once: every turn runs it. */
const beginRead = compiledOnce(
  'turn begin read',
  (db, v: { agentId: string; sessionKey: string; defaultModel: string; releaseBefore: Date }) =>
    db
      .with('released', (qb) =>
        qb
          .deleteFrom('pending_tool_args')
          .where('agent_id', '=', v.agentId)
          .where('session_id', 'in', (eb) =>
            eb
              .selectFrom('sessions')
              .select('sessions.session_id')
              .where('sessions.agent_id', '=', v.agentId)
              .where('sessions.session_key', '=', v.sessionKey),
          )
          .where('created_at', '<', v.releaseBefore),
      )
      .selectFrom('sessions')
      .selectAll('sessions')
      .select((eb) => [
        eb
          .selectFrom('model_limits')
          .select('model_limits.context_window')
          .where('model_limits.model', '=', eb.fn.coalesce('sessions.model_override', eb.val(v.defaultModel)))
          .as('learned_window'),
        eb
          .selectFrom('transcript_entries')
          .select('transcript_entries.id')
          .where('transcript_entries.agent_id', '=', v.agentId)
          .whereRef('transcript_entries.session_id', '=', 'sessions.session_id')
          .orderBy('transcript_entries.seq', 'desc')
          .limit(1)
          .as('last_entry_id'),
      ])
      .where('sessions.agent_id', '=', v.agentId)
      .where('sessions.session_key', '=', v.sessionKey),
);

/**
 * The begin's read for any session: a known one in one statement; a new one's row created first
 * (insert-or-nothing, so concurrent first turns agree on one row), then read the same way.
 */
export async function readOrCreateSessionForTurn(
  db: Kysely<Database>,
  input: {
    agentId: string;
    sessionKey: string;
    defaultModel: string;
    releaseToolArgsBefore: string;
    create: Omit<EnsureSessionInput, 'agentId' | 'sessionKey'>;
  },
): Promise<SessionForTurn> {
  const { create, ...read } = input;
  const known = await readSessionForTurn(db, read);
  if (known) return known;
  await createSession(db, { agentId: input.agentId, sessionKey: input.sessionKey, ...create });
  const created = await readSessionForTurn(db, read);
  if (!created) throw new Error(`session ${input.agentId}/${input.sessionKey} vanished after insert`);
  return created;
}
