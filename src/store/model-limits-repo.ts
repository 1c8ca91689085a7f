import { sql, type Kysely } from 'kysely';
import type { Database, SessionRow } from './schema';

/** The context window learned for a model, in Keel's token estimate; undefined when none was learned. */
export async function getLearnedWindow(db: Kysely<Database>, model: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('model_limits')
    .select('context_window')
    .where('model', '=', model)
    .executeTakeFirst();
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
        provider_max_tokens: sql<
          number | null
        >`coalesce(excluded.provider_max_tokens, model_limits.provider_max_tokens)`,
        provider_message: sql<string | null>`excluded.provider_message`,
        learned_at: sql<Date>`excluded.learned_at`,
      }),
    )
    .returning('context_window')
    .executeTakeFirstOrThrow();
  return row.context_window;
}

/** The session's estimate scale for `model` from its row's per-model map; undefined when it has none. */
export function estimateScaleFor(
  row: Pick<SessionRow, 'estimate_scales'> | undefined,
  model: string,
): number | undefined {
  const scale = row?.estimate_scales?.[model];
  return typeof scale === 'number' && scale > 0 && scale < 1 ? scale : undefined;
}

/** A session's scale for one model, read from its row in SQL. */
function scaleOf(model: string) {
  return sql<number | null>`(sessions.estimate_scales ->> ${model})::double precision`;
}

/**
 * Lowers a session's estimate scale for `model` at a refusal (raising is {@link raiseSessionEstimateScale}'s,
 * from a successful call's usage). Returns the scale now in force; undefined when the session has no row.
 */
export async function lowerSessionEstimateScale(
  db: Kysely<Database>,
  input: { agentId: string; sessionKey: string; model: string; scale: number },
): Promise<number | undefined> {
  const lowered = sql<number>`least(coalesce(${scaleOf(input.model)}, 1), ${input.scale}::double precision)`;
  const row = await db
    .updateTable('sessions')
    .set({
      estimate_scales: sql<string>`coalesce(sessions.estimate_scales, '{}'::jsonb) || jsonb_build_object(${input.model}::text, ${lowered})`,
    })
    .where('agent_id', '=', input.agentId)
    .where('session_key', '=', input.sessionKey)
    .returning(scaleOf(input.model).as('scale'))
    .executeTakeFirst();
  return row?.scale ?? undefined;
}

/**
 * Raises a session's estimate scale for `model` to `scale`, or clears it (null), after a successful
 * call measured its content lighter. Only the session it was measured on (a reset in the meantime
 * cleared the scales already), and only upwards: a retried write, or one behind a higher scale,
 * changes nothing.
 */
export async function raiseSessionEstimateScale(
  db: Kysely<Database>,
  input: { agentId: string; sessionKey: string; sessionId: string; model: string; scale: number | null },
): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({
      estimate_scales:
        input.scale === null
          ? sql<string>`sessions.estimate_scales - ${input.model}::text`
          : sql<string>`sessions.estimate_scales || jsonb_build_object(${input.model}::text, ${input.scale}::double precision)`,
    })
    .where('agent_id', '=', input.agentId)
    .where('session_key', '=', input.sessionKey)
    .where('session_id', '=', input.sessionId)
    .where(scaleOf(input.model), '<', input.scale ?? 1)
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
      eb
        .selectFrom('sessions')
        .select(scaleOf(model).as('scale'))
        .where('agent_id', '=', session.agentId)
        .where('session_key', '=', session.sessionKey)
        .as('estimate_scale'),
    ])
    .executeTakeFirstOrThrow();
  return { learnedWindow: row.learned_window ?? undefined, estimateScale: row.estimate_scale ?? undefined };
}
