import { sql, type Kysely } from 'kysely';
import type { Database } from './schema';

/** The context window learned for a model, in Keel's token estimate; undefined when none was learned. */
export async function getLearnedWindow(db: Kysely<Database>, model: string): Promise<number | undefined> {
  const row = await db.selectFrom('model_limits').select('context_window').where('model', '=', model).executeTakeFirst();
  return row?.context_window;
}

export interface LearnWindowInput {
  readonly model: string;
  /** The window to use from now on, in Keel's token estimate. */
  readonly contextWindow: number;
  readonly providerMaxTokens: number | null;
  readonly providerMessage: string | null;
  readonly now: Date;
}

/**
 * Lowers the model's learned window (never raises it: a later, larger reading comes from a request
 * Keel under-estimated less, not from a larger model). Returns the window now in force.
 */
export async function learnWindow(db: Kysely<Database>, input: LearnWindowInput): Promise<number> {
  const row = await db
    .insertInto('model_limits')
    .values({
      model: input.model,
      context_window: input.contextWindow,
      provider_max_tokens: input.providerMaxTokens,
      provider_message: input.providerMessage,
      learned_at: input.now,
    })
    .onConflict((oc) =>
      oc.column('model').doUpdateSet({
        context_window: sql<number>`least(model_limits.context_window, excluded.context_window)`,
        provider_max_tokens: sql<number | null>`coalesce(excluded.provider_max_tokens, model_limits.provider_max_tokens)`,
        provider_message: sql<string | null>`excluded.provider_message`,
        learned_at: sql<Date>`excluded.learned_at`,
      }),
    )
    .returning('context_window')
    .executeTakeFirstOrThrow();
  return row.context_window;
}

/**
 * Lowers a session's estimate scale at a refusal (raising is {@link raiseSessionEstimateScale}'s, from a
 * successful call's usage). Returns the scale now in force; undefined when the session has no row.
 */
export async function lowerSessionEstimateScale(db: Kysely<Database>, input: { agentId: string; sessionKey: string; scale: number }): Promise<number | undefined> {
  const row = await db
    .updateTable('sessions')
    .set({ estimate_scale: sql<number>`least(coalesce(sessions.estimate_scale, 1), ${input.scale}::double precision)` })
    .where('agent_id', '=', input.agentId)
    .where('session_key', '=', input.sessionKey)
    .returning('estimate_scale')
    .executeTakeFirst();
  return row?.estimate_scale ?? undefined;
}

/**
 * Raises a session's estimate scale to `scale`, or clears it (null), after a successful call measured
 * its content lighter. Only the session it was measured on (a reset in the meantime cleared the scale
 * already), and only upwards: a retried write, or one behind a higher scale, changes nothing.
 */
export async function raiseSessionEstimateScale(
  db: Kysely<Database>,
  input: { agentId: string; sessionKey: string; sessionId: string; scale: number | null },
): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ estimate_scale: input.scale })
    .where('agent_id', '=', input.agentId)
    .where('session_key', '=', input.sessionKey)
    .where('session_id', '=', input.sessionId)
    .where('estimate_scale', '<', input.scale ?? 1)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The model's learned window and the session's estimate scale, in one read. */
export async function getWindowReadings(
  db: Kysely<Database>,
  model: string,
  session: { agentId: string; sessionKey: string },
): Promise<{ learnedWindow: number | undefined; estimateScale: number | undefined }> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('model_limits').select('context_window').where('model', '=', model).as('learned_window'),
      eb.selectFrom('sessions').select('estimate_scale').where('agent_id', '=', session.agentId).where('session_key', '=', session.sessionKey).as('estimate_scale'),
    ])
    .executeTakeFirstOrThrow();
  return { learnedWindow: row.learned_window ?? undefined, estimateScale: row.estimate_scale ?? undefined };
}
