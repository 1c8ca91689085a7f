import { sql, type Kysely } from 'kysely';
import type { CompactionEntry } from '../context/types';
import type { CompactionOutcome } from '../compaction/types';
import type { CompactionRow, Database } from './schema';
import { storableJson, storableText } from '../text/storable-text';
import { redactSecrets, type Redaction } from '../security/redact';
import { atRestOf } from '../security/at-rest';
import { sealedRow } from '../security/sealed-rows';
import { searchColumns } from './entry-search-text';
import { usageCountersSet } from './sessions-repo';
import type { TokenUsage } from '../protocol';
import { usageTotal } from '../turn/token-usage';

/**
 * Reads and writes of the `compactions` table (one row per compaction attempt) and the one
 * transaction that records a compaction in the transcript and the session counters.
 */

export interface CreateCompactionRowInput {
  readonly id: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly trigger: string;
  readonly workflowId: string | null;
  readonly retryOf: string | null;
  readonly now: Date;
  /**
   * Counts this call as a new attempt (`attempts + 1`). False for a retried activity that may
   * already have counted, so a crash between insert and completion does not count twice.
   */
  readonly countAttempt: boolean;
  /** What the memory flush before this compaction did. */
  readonly memoryFlush?: string | null;
  /** A revert or rerun: the compaction it acts on. */
  readonly revertOf?: string | null;
  readonly rerunOf?: string | null;
}

/**
 * Creates the row as `running` with `attempts = 1`, or, when the id exists (the same compaction run
 * again), sets it back to `running`, clears its error and counts the attempt. Idempotent by id.
 */
export async function createCompactionRow(
  db: Kysely<Database>,
  input: CreateCompactionRowInput,
): Promise<CompactionRow> {
  await db
    .insertInto('compactions')
    .values({
      id: input.id,
      agent_id: input.agentId,
      session_key: input.sessionKey,
      session_id: input.sessionId,
      trigger: input.trigger,
      status: 'running',
      attempts: 1,
      error: null,
      tokens_before: null,
      tokens_after: null,
      first_kept_entry_id: null,
      entry_id: null,
      retry_of: input.retryOf,
      workflow_id: input.workflowId,
      started_at: input.now,
      finished_at: null,
      memory_flush: input.memoryFlush ?? null,
      revert_of: input.revertOf ?? null,
      rerun_of: input.rerunOf ?? null,
    })
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet((eb) => ({
          status: 'running',
          error: null,
          finished_at: null,
          attempts: input.countAttempt ? eb('compactions.attempts', '+', 1) : eb.ref('compactions.attempts'),
        }))
        // Another agent's row with this id is never touched.
        .where('compactions.agent_id', '=', input.agentId),
    )
    .execute();
  const row = await getCompaction(db, input.agentId, input.id);
  if (!row)
    throw new Error(
      `compaction id ${input.id} belongs to another agent than ${input.agentId}; compaction ids must be unique`,
    );
  return row;
}

export interface MarkSucceededInput extends CompactionOutcome {
  readonly agentId: string;
  readonly id: string;
  readonly now: Date;
  /** A degraded compaction: why its summary is extractive. */
  readonly error?: string;
}

/**
 * Marks the row finished. Returns true when this call moved it out of `running` (callers fire
 * `after_compaction` only then, so a retried activity does not fire it twice).
 */
export async function markSucceeded(db: Kysely<Database>, input: MarkSucceededInput): Promise<boolean> {
  const r = await db
    .updateTable('compactions')
    .set({
      status: input.status,
      degraded: input.degraded,
      error: input.error?.slice(0, 2_000) ?? null,
      tokens_before: input.tokensBefore,
      tokens_after: input.tokensAfter,
      first_kept_entry_id: input.firstKeptEntryId,
      entry_id: input.entryId,
      finished_at: input.now,
    })
    .where('agent_id', '=', input.agentId)
    .where('id', '=', input.id)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * Marks a running row failed with the error and counts a consecutive failure on its session
 * (`sessions.compaction_failures + 1`, only when the session still has the row's session id), in
 * one transaction. Returns false (and changes nothing) when the row was not running: idempotent.
 */
export async function markFailed(
  db: Kysely<Database>,
  agentId: string,
  id: string,
  error: string,
  now: Date,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('compactions')
      // A provider's error can quote what it was sent: stored redacted like everything else.
      .set({ status: 'failed', error: storableText(redactSecrets(error).value), finished_at: now })
      .where('agent_id', '=', agentId)
      .where('id', '=', id)
      .where('status', '=', 'running')
      .returning(['agent_id', 'session_key', 'session_id', 'trigger'])
      .executeTakeFirst();
    if (!row) return false;
    // A failed revert or rerun changed nothing in the session: it does not pause auto-compaction.
    if (OPERATOR_EDIT_TRIGGERS.has(row.trigger)) return true;
    await trx
      .updateTable('sessions')
      .set((eb) => ({ compaction_failures: eb('compaction_failures', '+', 1), updated_at: now }))
      .where('agent_id', '=', row.agent_id)
      .where('session_key', '=', row.session_key)
      .where('session_id', '=', row.session_id)
      .execute();
    return true;
  });
}

/** Triggers of an operator's edit of an earlier compaction (not a compaction of the active window). */
const OPERATOR_EDIT_TRIGGERS: ReadonlySet<string> = new Set(['revert', 'rerun']);

export interface ListCompactionsOptions {
  readonly agentId?: string | undefined;
  /** Only rows with status `failed`, or degraded ones (both are what an operator retries). */
  readonly failedOnly?: boolean | undefined;
  readonly limit: number;
}

/** Newest first. */
export async function listCompactions(db: Kysely<Database>, options: ListCompactionsOptions): Promise<CompactionRow[]> {
  let q = db.selectFrom('compactions').selectAll();
  if (options.agentId !== undefined) q = q.where('agent_id', '=', options.agentId);
  if (options.failedOnly) q = q.where((eb) => eb.or([eb('status', '=', 'failed'), eb('degraded', '=', true)]));
  return q.orderBy('started_at', 'desc').orderBy('id').limit(options.limit).execute();
}

/** One row of `agentId` by id, or undefined (another agent's id reads as none). */
export async function getCompaction(
  db: Kysely<Database>,
  agentId: string,
  id: string,
): Promise<CompactionRow | undefined> {
  return db
    .selectFrom('compactions')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export interface CompactionRecordInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** Deterministic (the compaction id): a retried write finds its own entry. */
  readonly entryId: string;
  readonly summary: string;
  /** `null` for a hard checkpoint: the entry's own id becomes `firstKeptEntryId`. */
  readonly firstKeptEntryId: string | null;
  readonly tokensBefore: number;
  /** Estimated tokens of the context after compaction (summary message + kept tail); becomes `context_tokens`. */
  readonly tokensAfter: number;
  /** The session's system prompt, workspace files and tools: added to `context_tokens`, as status counts them. */
  readonly promptOverheadTokens?: number;
  readonly now: Date;
  /** An applied rerun: the compaction it summarized again and the entry whose range it covers. */
  readonly lineage?: { readonly rerunOf: string; readonly rangeOf: string };
  /** Stored on the entry as is (a provider-written compaction keeps its block's metadata here). */
  readonly details?: unknown;
  /** What a provider's compaction used (billed apart from the call's reply): added to the session's counters. */
  readonly usage?: TokenUsage;
}

/**
 * Appends the compaction entry (`{type:'compaction', id, parentId, timestamp, summary,
 * firstKeptEntryId, tokensBefore}`, parent = the session's last entry) and updates the session
 * counters (`compaction_count + 1`, `context_tokens = tokensAfter` plus the prompt overhead, `compaction_failures = 0`, a
 * provider compaction's `usage`) in ONE transaction. Idempotent: the entry is inserted `ON CONFLICT DO NOTHING`, and the counters move
 * only when it was new. The summary is stored redacted, like every entry. Returns whether it was new
 * and what was redacted.
 */
export async function writeCompactionRecord(
  db: Kysely<Database>,
  input: CompactionRecordInput,
): Promise<{ inserted: boolean; redactions: readonly Redaction[] }> {
  const { value: summary, redactions } = redactSecrets(input.summary);
  return db.transaction().execute(async (trx) => {
    const last = await lastEntryId(trx, input);
    // The summary is model output: made storable like every other entry.
    const entry: CompactionEntry = storableJson({
      type: 'compaction',
      id: input.entryId,
      parentId: last === input.entryId ? null : (last ?? null),
      timestamp: input.now.toISOString(),
      summary,
      firstKeptEntryId: input.firstKeptEntryId ?? input.entryId,
      tokensBefore: input.tokensBefore,
      ...input.lineage,
      ...(input.details !== undefined ? { details: input.details } : {}),
    } satisfies CompactionEntry);
    const inserted = await insertCompactionEntry(trx, input, entry);
    if (inserted) {
      await trx
        .updateTable('sessions')
        .set((eb) => ({
          compaction_count: eb('compaction_count', '+', 1),
          context_tokens: input.tokensAfter + (input.promptOverheadTokens ?? 0),
          compaction_failures: 0,
          last_compaction_tokens_before: input.tokensBefore,
          last_compaction_tokens_after: input.tokensAfter,
          ...(input.usage ? usageCountersSet(eb, input.usage) : {}),
          updated_at: input.now,
        }))
        .where('agent_id', '=', input.agentId)
        .where('session_key', '=', input.sessionKey)
        .where('session_id', '=', input.sessionId)
        .execute();
    }
    return { inserted, redactions };
  });
}

/**
 * A compaction whose summary would not have made the context smaller: nothing is written to the
 * transcript, and the session records it as a compaction that reclaimed nothing, so the storm hold
 * keeps threshold compaction from trying again every turn (until the context grows by the minimum
 * reclaim share, or nears the window). Idempotent.
 */
export async function recordUnreclaimedCompaction(
  db: Kysely<Database>,
  input: { agentId: string; sessionKey: string; sessionId: string; tokensBefore: number; now: Date },
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({
      last_compaction_tokens_before: input.tokensBefore,
      last_compaction_tokens_after: input.tokensBefore,
      updated_at: input.now,
    })
    .where('agent_id', '=', input.agentId)
    .where('session_key', '=', input.sessionKey)
    .where('session_id', '=', input.sessionId)
    .execute();
}

async function lastEntryId(
  db: Kysely<Database>,
  input: { agentId: string; sessionId: string },
): Promise<string | undefined> {
  const last = await db
    .selectFrom('transcript_entries')
    .select('id')
    .where('agent_id', '=', input.agentId)
    .where('session_id', '=', input.sessionId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return last?.id;
}

/** Inserts a compaction entry once (`ON CONFLICT DO NOTHING` on its deterministic id); true when it was new. */
async function insertCompactionEntry(
  db: Kysely<Database>,
  input: { agentId: string; sessionId: string; now: Date },
  entry: CompactionEntry,
): Promise<boolean> {
  const r = await db
    .insertInto('transcript_entries')
    .values({
      agent_id: input.agentId,
      session_id: input.sessionId,
      id: entry.id,
      parent_id: entry.parentId,
      type: 'compaction',
      role: null,
      // The summary is conversation: sealed like every entry when encryption at rest is on.
      payload: atRestOf(db).json(entry, sealedRow.entryPayload(input.agentId, input.sessionId, entry.id)),
      token_estimate: null,
      byte_size: Buffer.byteLength(JSON.stringify(entry)),
      created_at: input.now,
      ...searchColumns(atRestOf(db), entry),
    })
    .onConflict((oc) => oc.columns(['agent_id', 'session_id', 'id']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

export interface RevertRecordInput {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  /** The revert's compaction id, also its entry id. */
  readonly entryId: string;
  /** The compaction whose window it undoes. */
  readonly revertOf: string;
  /** The window from before that compaction: its summary and first kept entry, and the entry whose range the summary covers (none: no summary). */
  readonly restored: RestoredWindow;
  /** The context now, and the restored one (estimated): `context_tokens` becomes `tokensAfter`. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly now: Date;
}

/** A window a revert restores. */
export interface RestoredWindow {
  readonly summary: string;
  readonly firstKeptEntryId: string;
  readonly rangeOf?: string;
}

/**
 * Appends a revert entry (a compaction entry with `revertOf`, whose summary and first kept entry are
 * the restored window's) and sets the session's context tokens, in ONE transaction, once. The revert
 * counts as a compaction that reclaimed nothing (`last_compaction_tokens_before = after`): the storm
 * hold then keeps threshold compaction from undoing it on the next turn, until the context grows by
 * the minimum reclaim share (or nears the window). `compaction_count` and the failure count stay.
 */
export async function writeRevertRecord(
  db: Kysely<Database>,
  input: RevertRecordInput,
): Promise<{ inserted: boolean }> {
  return db.transaction().execute(async (trx) => {
    const last = await lastEntryId(trx, input);
    const entry: CompactionEntry = storableJson({
      type: 'compaction',
      id: input.entryId,
      parentId: last === input.entryId ? null : (last ?? null),
      timestamp: input.now.toISOString(),
      summary: input.restored.summary,
      firstKeptEntryId: input.restored.firstKeptEntryId,
      tokensBefore: input.tokensBefore,
      revertOf: input.revertOf,
      ...(input.restored.rangeOf !== undefined ? { rangeOf: input.restored.rangeOf } : {}),
    } satisfies CompactionEntry);
    const inserted = await insertCompactionEntry(trx, input, entry);
    if (inserted) {
      await trx
        .updateTable('sessions')
        .set({
          context_tokens: input.tokensAfter,
          last_compaction_tokens_before: input.tokensAfter,
          last_compaction_tokens_after: input.tokensAfter,
          updated_at: input.now,
        })
        .where('agent_id', '=', input.agentId)
        .where('session_key', '=', input.sessionKey)
        .where('session_id', '=', input.sessionId)
        .execute();
    }
    return { inserted };
  });
}

/** Keeps a rerun's summary on its row when it is not applied (sealed at rest like entries). Idempotent. */
export async function storeRerunSummary(
  db: Kysely<Database>,
  agentId: string,
  id: string,
  summary: string,
): Promise<void> {
  const { value } = redactSecrets(summary);
  await db
    .updateTable('compactions')
    .set({ summary: atRestOf(db).text(storableText(value), sealedRow.compactionSummary(agentId, id)) })
    .where('agent_id', '=', agentId)
    .where('id', '=', id)
    .execute();
}

/** Summarizer calls and tokens spent in a window, per session key and per agent. */
export interface SummarizerSpend {
  readonly session: { readonly calls: number; readonly tokens: number };
  readonly agent: { readonly calls: number; readonly tokens: number };
}

/** What the agent's compactions (and those of `sessionKey`) spent on the summarizer since `since`. */
export async function summarizerSpendSince(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  since: Date,
): Promise<SummarizerSpend> {
  const rows = await db
    .selectFrom('compactions')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('summarizer_calls'), eb.lit(0)).as('calls'),
      eb.fn.coalesce(eb.fn.sum<number>('summarizer_tokens'), eb.lit(0)).as('tokens'),
      eb.fn
        .coalesce(
          eb.fn.sum<number>(
            eb.case().when('session_key', '=', sessionKey).then(eb.ref('summarizer_calls')).else(0).end(),
          ),
          eb.lit(0),
        )
        .as('session_calls'),
      eb.fn
        .coalesce(
          eb.fn.sum<number>(
            eb.case().when('session_key', '=', sessionKey).then(eb.ref('summarizer_tokens')).else(0).end(),
          ),
          eb.lit(0),
        )
        .as('session_tokens'),
    ])
    .where('agent_id', '=', agentId)
    .where('started_at', '>=', since)
    .executeTakeFirstOrThrow();
  return {
    session: { calls: Number(rows.session_calls), tokens: Number(rows.session_tokens) },
    agent: { calls: Number(rows.calls), tokens: Number(rows.tokens) },
  };
}

/**
 * Counts one summarizer call on the compaction's row (each call, retries included, is spend): its
 * billing, and all its tokens (cached or not) in `summarizer_tokens`, which the spend limit sums.
 */
export async function addSummarizerSpend(
  db: Kysely<Database>,
  agentId: string,
  id: string,
  billing: TokenUsage,
  model: string,
): Promise<void> {
  const tokens = usageTotal(billing);
  await db
    .updateTable('compactions')
    .set((eb) => ({
      summarizer_calls: eb('summarizer_calls', '+', 1),
      summarizer_tokens: eb('summarizer_tokens', '+', tokens),
      summarizer_input_tokens: eb('summarizer_input_tokens', '+', billing.inputTokens),
      summarizer_cache_read_tokens: eb('summarizer_cache_read_tokens', '+', billing.cacheReadTokens),
      summarizer_cache_write_tokens: eb('summarizer_cache_write_tokens', '+', billing.cacheWriteTokens),
      summarizer_output_tokens: eb('summarizer_output_tokens', '+', billing.outputTokens),
      summarizer_usage_estimated: sql<boolean>`summarizer_usage_estimated or ${billing.estimated === true}`,
      summarizer_model: model,
    }))
    .where('agent_id', '=', agentId)
    .where('id', '=', id)
    .execute();
}

/** Records on the row why its summary is extractive: the summarizer spend limit was reached. */
export async function markSpendLimited(
  db: Kysely<Database>,
  agentId: string,
  id: string,
  reason: string,
): Promise<void> {
  await db
    .updateTable('compactions')
    .set({ spend_limited: reason })
    .where('agent_id', '=', agentId)
    .where('id', '=', id)
    .execute();
}
