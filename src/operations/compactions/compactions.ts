/**
 * The compaction operations that read and retry: the history (`keel compactions [--failed]`), one
 * compaction with its summary and diff (`show`), and a fresh compaction for a failed one (`retry`).
 * Revert, rerun and compare are in compaction-edits.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { DEFAULTS } from '../../config/defaults';
import { getCompaction, listCompactions as listCompactionRows } from '../../store/compactions-repo';
import type { CompactionRow, Database } from '../../store/schema';
import {
  COMPACTION_WORKFLOW_TYPE,
  compactionWorkflowId,
  type CompactionTriggerName,
  type CompactionWorkflowInput,
} from '../../protocol';
import { KeelAgentId, KeelSessionKey, KeelStatus, KeelTrigger } from '../../temporal/search-attributes';
import { CompactionNotFoundError } from '../errors';
import { compactionDetail, type CompactionDetail } from './compaction-detail';
import type { CompactionView, compactionsList, retryResult } from './compaction-views';

/** Rows listed at most (newest first). */
const LIST_LIMIT = 50;

/** The compaction history: `{ compactions }`, and with `failed` the sessions whose auto-compaction paused. */
export type CompactionsListView = z.infer<typeof compactionsList>;
/** A session whose auto-compaction stopped after consecutive failures (`--failed` lists them). */
export type PausedSession = NonNullable<CompactionsListView['pausedSessions']>[number];
/** What a retry started, or the running compaction it joined. */
export type CompactionsRetryResult = z.infer<typeof retryResult>;

/** What the compaction operations read and start with: the store, and for retries Temporal. */
export interface CompactionStoreDeps {
  readonly db: Kysely<Database>;
}

/** What an operation that starts the session's compaction workflow needs beside the store. */
export interface CompactionWorkflowDeps extends CompactionStoreDeps {
  readonly temporalClient: Client;
  readonly taskQueue: string;
  /** The window of the agent that owns the compaction (default 200,000). */
  readonly contextWindowFor?: ((agentId: string) => number) | undefined;
}

/** Which compactions to list. */
export interface CompactionsListInput {
  /** Only failed or degraded rows (those an operator retries). */
  readonly failed?: boolean | undefined;
  readonly agentId?: string | undefined;
  readonly limit?: number | undefined;
}

/** A compaction named by its id and the agent it must belong to (another agent's row is refused like an unknown one). */
export interface CompactionRef {
  readonly agentId: string;
  readonly id: string;
}

/** A `compactions` row as a view (ISO times). */
export function toCompactionView(row: CompactionRow): CompactionView {
  return {
    id: row.id,
    agentId: row.agent_id,
    sessionKey: row.session_key,
    sessionId: row.session_id,
    trigger: row.trigger,
    status: row.status,
    degraded: row.degraded,
    error: row.error,
    attempts: row.attempts,
    tokensBefore: row.tokens_before,
    tokensAfter: row.tokens_after,
    firstKeptEntryId: row.first_kept_entry_id,
    entryId: row.entry_id,
    retryOf: row.retry_of,
    revertOf: row.revert_of,
    rerunOf: row.rerun_of,
    summarizerModel: row.summarizer_model,
    summarizerCalls: row.summarizer_calls,
    summarizerTokens: row.summarizer_tokens,
    summarizerBilling: {
      input: row.summarizer_input_tokens,
      cacheRead: row.summarizer_cache_read_tokens,
      cacheWrite: row.summarizer_cache_write_tokens,
      output: row.summarizer_output_tokens,
      ...(row.summarizer_usage_estimated ? { estimated: true as const } : {}),
    },
    spendLimited: row.spend_limited,
    workflowId: row.workflow_id,
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at ? new Date(row.finished_at).toISOString() : null,
  };
}

/** The compaction history, newest first; with `failed`, each row says how to retry it and paused sessions are listed. */
export async function listCompactions(
  deps: CompactionStoreDeps,
  input: CompactionsListInput = {},
): Promise<CompactionsListView> {
  const rows = await listCompactionRows(deps.db, {
    agentId: input.agentId,
    failedOnly: input.failed ?? false,
    limit: input.limit ?? LIST_LIMIT,
  });
  const compactions = rows.map((row) =>
    input.failed
      ? { ...toCompactionView(row), retryCommand: `keel compactions retry ${row.id} --agent ${row.agent_id}` }
      : toCompactionView(row),
  );
  if (!input.failed) return { compactions };
  return { compactions, pausedSessions: await sessionsWithAutoCompactionPaused(deps.db, input.agentId) };
}

async function sessionsWithAutoCompactionPaused(
  db: Kysely<Database>,
  agentId: string | undefined,
): Promise<PausedSession[]> {
  let query = db
    .selectFrom('sessions')
    .select(['agent_id', 'session_key', 'compaction_failures'])
    .where('compaction_failures', '>=', DEFAULTS.maxConsecutiveCompactionFailures)
    .orderBy('updated_at', 'desc');
  if (agentId) query = query.where('agent_id', '=', agentId);
  const rows = await query.execute();
  return rows.map((r) => ({
    agentId: r.agent_id,
    sessionKey: r.session_key,
    consecutiveFailures: r.compaction_failures,
  }));
}

/** The row named by `ref`, or `CompactionNotFoundError`. */
export async function compactionRow(db: Kysely<Database>, ref: CompactionRef): Promise<CompactionRow> {
  const row = await getCompaction(db, ref.agentId, ref.id);
  if (!row) throw new CompactionNotFoundError(ref.id, ref.agentId);
  return row;
}

/** One compaction with its summary, the range it covers and the diff from the session's previous summary. */
export async function showCompaction(
  deps: CompactionStoreDeps,
  ref: CompactionRef,
): Promise<{ compaction: CompactionView; detail: CompactionDetail }> {
  const row = await compactionRow(deps.db, ref);
  return { compaction: toCompactionView(row), detail: await compactionDetail(deps.db, row) };
}

/**
 * Starts the session's compaction workflow with `input`, or joins the one already running for the
 * session (`USE_EXISTING`). `runningId` is the compaction the running execution names in its memo
 * (the workflow sets it too): `input.compactionId` when this call started it.
 */
export async function startOrJoinCompaction(
  temporalClient: Client,
  taskQueue: string,
  input: CompactionWorkflowInput,
): Promise<{ handle: WorkflowHandle; workflowId: string; runningId: string | null }> {
  const workflowId = compactionWorkflowId(input.agentId, input.sessionKey);
  const handle = await temporalClient.workflow.start(COMPACTION_WORKFLOW_TYPE, {
    workflowId,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    memo: { compactionId: input.compactionId },
    typedSearchAttributes: [
      { key: KeelAgentId, value: input.agentId },
      { key: KeelSessionKey, value: input.sessionKey },
      { key: KeelTrigger, value: input.trigger },
      { key: KeelStatus, value: 'running' },
    ],
  });
  const memo = (await handle.describe()).memo as { compactionId?: unknown } | undefined;
  return { handle, workflowId, runningId: typeof memo?.compactionId === 'string' ? memo.compactionId : null };
}

/**
 * Starts a fresh compaction (trigger `manual`, `retryOf` = id) for the row's session. Idempotent: when
 * a compaction already runs for the session, it is joined (`USE_EXISTING`) and reported with
 * `started: false`. Does not wait for the result.
 */
export async function retryCompaction(
  deps: CompactionWorkflowDeps,
  input: CompactionRef & {
    /** Recent tail kept verbatim (default `DEFAULTS.keepRecentTokens`, so a retry never hard-checkpoints by surprise). */
    readonly keepRecentTokens?: number | undefined;
  },
): Promise<CompactionsRetryResult> {
  const row = await compactionRow(deps.db, input);
  const trigger: CompactionTriggerName = 'manual';
  const workflowInput: CompactionWorkflowInput = {
    agentId: row.agent_id,
    sessionKey: row.session_key,
    sessionId: row.session_id,
    trigger,
    compactionId: randomUUID(),
    retryOf: row.id,
    keepRecentTokens: input.keepRecentTokens ?? DEFAULTS.keepRecentTokens,
    contextWindowTokens: deps.contextWindowFor?.(row.agent_id) ?? DEFAULTS.contextWindowTokens,
  };
  const { workflowId, runningId } = await startOrJoinCompaction(deps.temporalClient, deps.taskQueue, workflowInput);
  const started = runningId === workflowInput.compactionId;
  return { compactionId: started ? workflowInput.compactionId : runningId, retryOf: row.id, workflowId, started };
}

/**
 * What `keel status` adds from the session's newest compaction record, when it changes how the
 * session compacts: its window was reverted (threshold compaction is held), or the summarizer spend
 * limit made its summary extractive. Null otherwise.
 */
export async function sessionCompactionNote(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
): Promise<string | null> {
  const [row] = await db
    .selectFrom('compactions')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('session_key', '=', sessionKey)
    .where('status', '=', 'succeeded')
    .where('entry_id', 'is not', null)
    .orderBy('started_at', 'desc')
    .limit(1)
    .execute();
  if (!row) return null;
  if (row.revert_of)
    return `window reverted by compaction ${row.id} (revert of ${row.revert_of}); threshold compaction waits until the context grows (KEEL_COMPACTION_MIN_RECLAIM); undo: keel compactions revert ${row.id} --agent ${agentId}`;
  if (row.spend_limited)
    return `last compaction ${row.id}: ${row.spend_limited}; rerun it with the model later: keel compactions rerun ${row.id} --apply --agent ${agentId}`;
  return null;
}
