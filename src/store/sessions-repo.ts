import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database, NewSessionRow, SessionRow } from './schema';
import { storableJsonText, storableText } from '../text/storable-text';
import { sessionIdsOfKey } from './session-ids-repo';
import type { TokenUsage } from '../protocol';
import type { PromptOverhead } from '../context/context-split';
import type { ThinkingLevel } from '../turn/thinking-level';

/** Reads and writes of `sessions`. Every call is scoped by agentId. */

export interface EnsureSessionInput {
  agentId: string;
  sessionKey: string;
  /** Used only when the row is created. */
  newSessionId: string;
  now: Date;
  chatType?: string | null;
}

/**
 * Creates the session's row unless it exists (concurrent callers: one wins, the others write nothing).
 * One statement: the row and its first session id are recorded together or not at all.
 */
export async function createSession(db: Kysely<Database>, input: EnsureSessionInput): Promise<void> {
  await db
    .with('created', (qb) =>
      qb
        .insertInto('sessions')
        .values({
          agent_id: input.agentId,
          session_key: input.sessionKey,
          session_id: input.newSessionId,
          session_started_at: input.now,
          last_interaction_at: input.now,
          updated_at: input.now,
          chat_type: input.chatType == null ? null : storableText(input.chatType),
          toggles: '{}',
          channel: null,
          label: null,
          display_name: null,
          delivery: null,
          model_override: null,
          provider_override: null,
          auth_profile_override: null,
          memory_flush_at: null,
          memory_flush_compaction_count: null,
        })
        .onConflict((oc) => oc.columns(['agent_id', 'session_key']).doNothing())
        .returning(['agent_id', 'session_key', 'session_id', 'session_started_at']),
    )
    .insertInto('session_ids')
    .columns(['agent_id', 'session_key', 'session_id', 'started_at'])
    .expression((eb) =>
      eb.selectFrom('created').select(['agent_id', 'session_key', 'session_id', 'session_started_at']),
    )
    .onConflict((oc) => oc.columns(['agent_id', 'session_id']).doNothing())
    .execute();
}

export async function getSession(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .executeTakeFirst();
}

/**
 * Sets (or with `null` clears) the session's model override: its turns call this model id instead of
 * the agent's. False when the session does not exist (nothing is created).
 */
export async function setModelOverride(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  model: string | null,
): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ model_override: model === null ? null : storableText(model), updated_at: new Date() })
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Sets (or with `null` clears) the session's thinking level, kept as its `thinkingLevel` toggle (where
 * an OpenClaw import puts it): its turns think at this level instead of the agent's. False when the
 * session does not exist (nothing is created).
 */
export async function setThinkingLevel(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  level: ThinkingLevel | null,
): Promise<boolean> {
  const toggles =
    level === null
      ? sql<string>`toggles - 'thinkingLevel'`
      : sql<string>`toggles || jsonb_build_object('thinkingLevel', ${level}::text)`;
  const result = await db
    .updateTable('sessions')
    .set({ toggles, updated_at: new Date() })
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface TurnUsageUpdate {
  agentId: string;
  sessionKey: string;
  /** What the turn's model calls used. */
  usage: TokenUsage;
  /** Estimated tokens of the context the model will see next turn. */
  contextTokens: number;
  now: Date;
  /** System events (heartbeat, cron, exec notices) do not refresh idle/daily freshness (OpenClaw session freshness). */
  touch?: boolean;
  /** What the turn's last call sent besides the conversation (absent when no call of this attempt measured it). */
  promptOverhead?: PromptOverhead;
}

/** Adds a turn's usage to the counters and marks the total fresh (it comes from the latest run). */
export async function recordTurnUsage(db: Kysely<Database>, u: TurnUsageUpdate): Promise<SessionRow | undefined> {
  return (
    db
      .updateTable('sessions')
      .set((eb) => turnUsageSet(eb, turnUsageValues(u)))
      .where('agent_id', '=', u.agentId)
      .where('session_key', '=', u.sessionKey)
      // The row after the update: the turn's decisions read it without a second query.
      .returningAll()
      .executeTakeFirst()
  );
}

/** Usage as the session's counters add it, each count one statement parameter (`totalTokens`: input plus output). */
type UsageCounterValues = Omit<TokenUsage, 'estimated'> & { totalTokens: number; usageEstimated: boolean };

/** A turn's usage as the values of `turnUsageSet` (each one a statement parameter). */
export interface TurnUsageValues extends UsageCounterValues {
  contextTokens: number;
  now: Date;
  /** Present unless the turn was a system event (then freshness is not refreshed). */
  touchedAt?: Date;
  /** Present when the turn's last call measured it. */
  promptSystemTokens?: number;
  promptWorkspaceTokens?: number;
  promptToolTokens?: number;
}

export function turnUsageValues(u: TurnUsageUpdate): TurnUsageValues {
  return {
    ...usageCounterValues(u.usage),
    contextTokens: u.contextTokens,
    now: u.now,
    ...(u.touch === false ? {} : { touchedAt: u.now }),
    ...(u.promptOverhead
      ? {
          promptSystemTokens: u.promptOverhead.systemTokens,
          promptWorkspaceTokens: u.promptOverhead.bootstrapTokens,
          promptToolTokens: u.promptOverhead.toolTokens,
        }
      : {}),
  };
}

function usageCounterValues(u: TokenUsage): UsageCounterValues {
  return {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    cacheReadTokens: u.cacheReadTokens,
    cacheWriteTokens: u.cacheWriteTokens,
    totalTokens: u.inputTokens + u.outputTokens,
    usageEstimated: u.estimated === true,
  };
}

/** The session's usage counters grown by `u`. */
export function usageCountersSet(eb: ExpressionBuilder<Database, 'sessions'>, u: TokenUsage) {
  return counterValuesSet(eb, usageCounterValues(u));
}

/** The counters grown by values already split into parameters (statements compiled once pass them through unchanged). */
function counterValuesSet(eb: ExpressionBuilder<Database, 'sessions'>, u: UsageCounterValues) {
  return {
    input_tokens: eb('input_tokens', '+', u.inputTokens),
    output_tokens: eb('output_tokens', '+', u.outputTokens),
    cache_read_tokens: eb('cache_read_tokens', '+', u.cacheReadTokens),
    cache_write_tokens: eb('cache_write_tokens', '+', u.cacheWriteTokens),
    total_tokens: eb('total_tokens', '+', u.totalTokens),
    usage_estimated: sql<boolean>`usage_estimated or ${u.usageEstimated}`,
  };
}

/** Adds usage outside a turn (a provider compaction that failed) to the session's counters. */
export async function addSessionUsage(
  db: Kysely<Database>,
  session: { agentId: string; sessionKey: string; sessionId: string },
  u: TokenUsage,
  now: Date,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set((eb) => ({ ...usageCountersSet(eb, u), updated_at: now }))
    .where('agent_id', '=', session.agentId)
    .where('session_key', '=', session.sessionKey)
    .where('session_id', '=', session.sessionId)
    .execute();
}

/** What a finished turn changes in its session row: the counters grow by its usage, the context size is its own. */
export function turnUsageSet(eb: ExpressionBuilder<Database, 'sessions'>, v: TurnUsageValues) {
  return {
    ...counterValuesSet(eb, v),
    context_tokens: v.contextTokens,
    total_tokens_fresh: true,
    // Never backwards: a turn that finishes late (a retry, a queued turn) cannot shorten the idle window.
    ...('touchedAt' in v ? { last_interaction_at: sql<Date>`greatest(last_interaction_at, ${v.touchedAt})` } : {}),
    ...('promptSystemTokens' in v
      ? {
          prompt_system_tokens: v.promptSystemTokens,
          prompt_workspace_tokens: v.promptWorkspaceTokens,
          prompt_tool_tokens: v.promptToolTokens,
        }
      : {}),
    updated_at: v.now,
  };
}

/**
 * Inserts a session row brought in by an import. Never overwrites: a row that already exists for
 * (agent_id, session_key) is live state and wins, so re-importing an index changes nothing. Its
 * descriptive text is made storable (NUL and lone surrogates become U+FFFD); keys and ids are not
 * rewritten, since other rows refer to them.
 * @returns true when the row was new.
 */
export async function insertImportedSession(db: Kysely<Database>, row: NewSessionRow): Promise<boolean> {
  const created = await db
    .with('created', (qb) =>
      qb
        .insertInto('sessions')
        .values(storableSessionRow(row))
        .onConflict((oc) => oc.columns(['agent_id', 'session_key']).doNothing())
        .returning(['agent_id', 'session_key', 'session_id', 'session_started_at']),
    )
    .with('recorded', (qb) =>
      qb
        .insertInto('session_ids')
        .columns(['agent_id', 'session_key', 'session_id', 'started_at'])
        .expression((eb) =>
          eb.selectFrom('created').select(['agent_id', 'session_key', 'session_id', 'session_started_at']),
        )
        .onConflict((oc) => oc.columns(['agent_id', 'session_id']).doNothing())
        .returning('session_id'),
    )
    .selectFrom('created')
    .select('session_id')
    .execute();
  return created.length > 0;
}

/**
 * Settles a row an import created or found: its context estimate, and with `freshAt` a new start
 * and last interaction (the import keeps its context past the daily or idle reset). Touches the row
 * only while `sessionId` is still the key's current transcript.
 */
export async function settleImportedSessionRow(
  db: Kysely<Database>,
  input: {
    readonly agentId: string;
    readonly sessionKey: string;
    readonly sessionId: string;
    readonly contextTokens?: number;
    readonly freshAt?: Date;
  },
): Promise<void> {
  const set = {
    ...(input.contextTokens !== undefined ? { context_tokens: input.contextTokens } : {}),
    ...(input.freshAt ? { session_started_at: input.freshAt, last_interaction_at: input.freshAt } : {}),
  };
  if (Object.keys(set).length === 0) return;
  await db
    .updateTable('sessions')
    .set(set)
    .where('agent_id', '=', input.agentId)
    .where('session_key', '=', input.sessionKey)
    .where('session_id', '=', input.sessionId)
    .execute();
}

const DESCRIPTIVE_TEXT = [
  'chat_type',
  'channel',
  'label',
  'display_name',
  'model_override',
  'provider_override',
  'auth_profile_override',
] as const;

function storableSessionRow(row: NewSessionRow): NewSessionRow {
  const out: NewSessionRow = { ...row };
  for (const column of DESCRIPTIVE_TEXT) {
    const v = row[column];
    if (typeof v === 'string') out[column] = storableText(v);
  }
  if (typeof row.delivery === 'string') out.delivery = storableJsonText(row.delivery);
  if (typeof row.toggles === 'string') out.toggles = storableJsonText(row.toggles);
  return out;
}

/** Sessions of an agent (or of every agent) whose updated_at is before `before`, oldest first. */
export async function sessionsUpdatedBefore(
  db: Kysely<Database>,
  before: Date,
  agentId?: string,
): Promise<Array<Pick<SessionRow, 'agent_id' | 'session_key' | 'session_id' | 'updated_at'>>> {
  let q = db
    .selectFrom('sessions')
    .select(['agent_id', 'session_key', 'session_id', 'updated_at'])
    .where('updated_at', '<', before);
  if (agentId !== undefined) q = q.where('agent_id', '=', agentId);
  return q.orderBy('updated_at', 'asc').execute();
}

/**
 * Deletes a session row with the transcripts of every session id the key has had (the current one and
 * the rotated ones), their pending tool arguments, the key's compaction and tool-approval rows and its
 * session id history (maintenance pruning). Memory notes stay.
 */
export async function deleteSessionCascade(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  sessionId: string,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const ids = [...new Set([sessionId, ...(await sessionIdsOfKey(trx, agentId, sessionKey)).map((s) => s.sessionId)])];
    const entries = await trx
      .deleteFrom('transcript_entries')
      .where('agent_id', '=', agentId)
      .where('session_id', 'in', ids)
      .executeTakeFirst();
    await trx.deleteFrom('pending_tool_args').where('agent_id', '=', agentId).where('session_id', 'in', ids).execute();
    await trx.deleteFrom('compactions').where('agent_id', '=', agentId).where('session_key', '=', sessionKey).execute();
    await trx
      .deleteFrom('tool_approvals')
      .where('agent_id', '=', agentId)
      .where('session_key', '=', sessionKey)
      .execute();
    await trx.deleteFrom('session_ids').where('agent_id', '=', agentId).where('session_key', '=', sessionKey).execute();
    await trx.deleteFrom('sessions').where('agent_id', '=', agentId).where('session_key', '=', sessionKey).execute();
    return Number(entries.numDeletedRows);
  });
}

export interface RotateSessionInput {
  agentId: string;
  sessionKey: string;
  /** Deterministic (workflow code), so a retried rotation is a no-op. */
  newSessionId: string;
  now: Date;
}

/**
 * Starts a new sessionId for the key (reset, daily or idle expiry): a fresh transcript and fresh
 * counters. The old transcript stays under its old sessionId (export, audit, recall).
 * @returns true when this call rotated (false when the key already has `newSessionId`).
 */
export async function rotateSession(db: Kysely<Database>, input: RotateSessionInput): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('sessions')
      .select(['session_id', 'session_started_at'])
      .where('agent_id', '=', input.agentId)
      .where('session_key', '=', input.sessionKey)
      .forUpdate()
      .executeTakeFirst();
    if (!before || before.session_id === input.newSessionId) return false;
    await updateToNewSessionId(trx, input);
    // The id history: the old id ends now (kept if it was already recorded), the new one starts.
    await trx
      .insertInto('session_ids')
      .values({
        agent_id: input.agentId,
        session_key: input.sessionKey,
        session_id: before.session_id,
        started_at: before.session_started_at,
        ended_at: input.now,
      })
      .onConflict((oc) =>
        oc
          .columns(['agent_id', 'session_id'])
          .doUpdateSet({ ended_at: sql`coalesce(session_ids.ended_at, excluded.ended_at)` }),
      )
      .execute();
    await trx
      .insertInto('session_ids')
      .values({
        agent_id: input.agentId,
        session_key: input.sessionKey,
        session_id: input.newSessionId,
        started_at: input.now,
        ended_at: null,
      })
      .onConflict((oc) => oc.columns(['agent_id', 'session_id']).doNothing())
      .execute();
    return true;
  });
}

async function updateToNewSessionId(db: Kysely<Database>, input: RotateSessionInput): Promise<void> {
  await db
    .updateTable('sessions')
    .set({
      session_id: input.newSessionId,
      session_started_at: input.now,
      last_interaction_at: input.now,
      updated_at: input.now,
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      context_tokens: 0,
      total_tokens_fresh: false,
      compaction_count: 0,
      compaction_failures: 0,
      memory_flush_at: null,
      memory_flush_compaction_count: null,
      // What fooled the estimate was the old conversation's content.
      estimate_scales: null,
      // The new session id's first turn measures its own.
      prompt_system_tokens: null,
      prompt_workspace_tokens: null,
      prompt_tool_tokens: null,
    })
    .where('agent_id', '=', input.agentId)
    .where('session_key', '=', input.sessionKey)
    .execute();
}
