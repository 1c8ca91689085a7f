/**
 * `keel compactions [--failed] [--json]`, `keel compactions show <id>`, `keel compactions retry <id>`.
 * Each returns one object (printed as JSON on stdout with --json) and writes a readable rendering
 * for people to stderr.
 */
import { billingText } from './compaction-billing';
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { DEFAULTS } from '../config/defaults';
import { getCompaction, listCompactions, type SummarizerBilling } from '../store/compactions-repo';
import type { CompactionRow, Database } from '../store/schema';
import {
  COMPACTION_WORKFLOW_TYPE,
  compactionWorkflowId,
  type CompactionTriggerName,
  type CompactionWorkflowInput,
} from '../protocol';
import { KeelAgentId, KeelSessionKey, KeelStatus, KeelTrigger } from '../temporal/search-attributes';
import { compactionDetail, type CompactionDetail } from './compaction-detail';
import { shownKey } from './shown-key';

/** Rows listed at most (newest first). */
const LIST_LIMIT = 50;
/** Width of the tokens before → after bar. */
const BAR_WIDTH = 20;

/** A `compactions` row as the CLI prints it (JSON-friendly: ISO times). */
export interface CompactionView {
  readonly id: string;
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly trigger: string;
  readonly status: string;
  readonly degraded: boolean;
  readonly error: string | null;
  readonly attempts: number;
  readonly tokensBefore: number | null;
  readonly tokensAfter: number | null;
  readonly firstKeptEntryId: string | null;
  readonly entryId: string | null;
  readonly retryOf: string | null;
  /** A revert: the compaction whose window it undid. */
  readonly revertOf: string | null;
  /** A rerun: the compaction whose range it summarized again (`applied` when its entry was written). */
  readonly rerunOf: string | null;
  /** The summarizer model, and the calls and tokens it spent (the spend limit counts them). */
  readonly summarizerModel: string | null;
  readonly summarizerCalls: number;
  readonly summarizerTokens: number;
  /** What those calls were billed, by kind (as the provider reported it). */
  readonly summarizerBilling: SummarizerBilling;
  /** Set when the spend limit kept the summarizer from being called (the summary is extractive). */
  readonly spendLimited: string | null;
  readonly workflowId: string | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  /** With `--failed`: the command that retries it. */
  readonly retryCommand?: string;
}

/** Where people-text goes (stderr by default; tests capture it). */
export type Write = (text: string) => void;
const stderr: Write = (text) => void process.stderr.write(text);

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

/**
 * `[████████████████████] 182k → [███░░░░░░░░░░░░░░░░░] 24k (−87%)`: tokens after drawn against
 * tokens before. "—" when the numbers are unknown (running or failed).
 */
export function tokensBar(before: number | null, after: number | null, width = BAR_WIDTH): string {
  if (before === null) return '—';
  const k = (n: number) => (n >= 1000 ? `${Math.round(n / 1000)}k` : String(n));
  if (after === null) return `${k(before)} → ?`;
  const filled = before > 0 ? Math.min(width, Math.round((after / before) * width)) : 0;
  const saved = before > 0 ? Math.round((1 - after / before) * 100) : 0;
  // A revert grows the context: said as a plus, not a negative saving.
  const change = saved < 0 ? `+${-saved}%` : `−${saved}%`;
  return `${k(before)} → ${k(after)} [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${change}`;
}

function statusLabel(v: CompactionView): string {
  return v.degraded ? `${v.status} (degraded)` : v.status;
}

/** What an operator's edit did: `revert of <id>`, `rerun of <id> (applied|recorded, not applied)`. */
export function lineageLabel(v: Pick<CompactionView, 'revertOf' | 'rerunOf' | 'entryId' | 'status'>): string | null {
  if (v.revertOf) return `revert of ${v.revertOf}`;
  if (v.rerunOf)
    return `rerun of ${v.rerunOf}${v.status === 'succeeded' ? (v.entryId ? ' (applied)' : ' (recorded, not applied)') : ''}`;
  return null;
}

export interface CompactionsListOptions {
  readonly db: Kysely<Database>;
  /** Only failed or degraded rows (those an operator retries). */
  readonly failed?: boolean;
  readonly agentId?: string;
  readonly limit?: number;
  /** With --json the table is not drawn (stdout carries the object). */
  readonly json?: boolean;
  readonly write?: Write;
}

/** A session whose auto-compaction stopped after consecutive failures (`--failed` lists them). */
export interface PausedSession {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly consecutiveFailures: number;
}

/** `keel compactions [--failed]`: newest first. Returns `{ compactions }`, with `--failed` also `pausedSessions`. */
export async function compactionsList(
  opts: CompactionsListOptions,
): Promise<{ compactions: CompactionView[]; pausedSessions?: PausedSession[] }> {
  const rows = await listCompactions(opts.db, {
    agentId: opts.agentId,
    failedOnly: opts.failed ?? false,
    limit: opts.limit ?? LIST_LIMIT,
  });
  const compactions = rows.map((row) =>
    opts.failed
      ? { ...toCompactionView(row), retryCommand: `keel compactions retry ${row.id} --agent ${row.agent_id}` }
      : toCompactionView(row),
  );
  const pausedSessions = opts.failed ? await sessionsWithAutoCompactionPaused(opts.db, opts.agentId) : undefined;
  if (!opts.json) {
    const write = opts.write ?? stderr;
    for (const p of pausedSessions ?? []) {
      write(
        `auto-compaction PAUSED for ${shownKey(p.sessionKey)} (agent ${p.agentId}) after ${p.consecutiveFailures} failed compactions in a row; a successful retry or \`keel compact\` resumes it\n`,
      );
    }
    if (compactions.length === 0) write(opts.failed ? 'no failed or degraded compactions\n' : 'no compactions\n');
    for (const v of compactions) {
      write(
        `${v.id}  ${v.startedAt.slice(0, 19).replace('T', ' ')}  ${v.sessionKey}  ${v.trigger}  ${statusLabel(v)}  ${tokensBar(v.tokensBefore, v.tokensAfter)}\n`,
      );
      const lineage = lineageLabel(v);
      if (lineage) write(`    ${lineage}\n`);
      if (v.error) write(`    error: ${v.error}\n`);
      else if (v.spendLimited) write(`    degraded: ${v.spendLimited}\n`);
      else if (v.degraded) write('    degraded: the summary is extractive (no model summary could be had)\n');
      if (v.retryCommand) write(`    retry: ${v.retryCommand}\n`);
    }
  }
  return pausedSessions ? { compactions, pausedSessions } : { compactions };
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

/** The id named no `compactions` row of the agent (another agent's row is not shown or retried). */
export class CompactionNotFoundError extends Error {
  override readonly name = 'CompactionNotFoundError';
  constructor(
    readonly id: string,
    readonly agentId: string,
  ) {
    super(
      `no compaction ${shownId(id)} for agent ${agentId}; list them with \`keel compactions --agent ${agentId}\` (another agent's compaction needs its --agent)`,
    );
  }
}

/** An id as messages show it: a pasted megabyte is cut. */
function shownId(id: string): string {
  return id.length > 80 ? `${id.slice(0, 80)}… (${id.length} characters)` : id;
}

export interface CompactionsShowOptions {
  readonly db: Kysely<Database>;
  /** The agent the compaction must belong to. */
  readonly agentId: string;
  readonly id: string;
  readonly json?: boolean;
  readonly write?: Write;
}

/**
 * `keel compactions show <id>`: the row, the summary, the range it covers and the diff from the
 * session's previous summary. Returns `{ compaction, detail }`; throws `CompactionNotFoundError`.
 */
export async function compactionsShow(
  opts: CompactionsShowOptions,
): Promise<{ compaction: CompactionView; detail: CompactionDetail }> {
  const row = await getCompaction(opts.db, opts.agentId, opts.id);
  if (!row) throw new CompactionNotFoundError(opts.id, opts.agentId);
  const v = toCompactionView(row);
  const detail = await compactionDetail(opts.db, row);
  if (!opts.json) {
    const write = opts.write ?? stderr;
    const lines: Array<[string, string | number | null]> = [
      ['id', v.id],
      ['session', `${v.sessionKey} (agent ${v.agentId}, session ${v.sessionId})`],
      ['trigger', v.trigger],
      ['status', statusLabel(v)],
      ['attempts', v.attempts],
      ['tokens', tokensBar(v.tokensBefore, v.tokensAfter)],
      ['first kept entry', v.firstKeptEntryId],
      ['summarized', detail.entriesSummarized === null ? null : `${detail.entriesSummarized} entries`],
      ['compaction entry', v.entryId],
      ['retry of', v.retryOf],
      ['edit', lineageLabel(v)],
      [
        'summarizer',
        v.summarizerModel ? `${v.summarizerModel}: ${v.summarizerCalls} calls, ${v.summarizerTokens} tokens` : null,
      ],
      ['billed', v.summarizerCalls > 0 ? billingText(v.summarizerBilling) : null],
      ['spend limit', v.spendLimited],
      ['workflow', v.workflowId],
      ['started', v.startedAt],
      ['finished', v.finishedAt],
      ['error', v.error],
    ];
    for (const [k, value] of lines) if (value !== null) write(`${k.padEnd(17)} ${value}\n`);
    if (v.entryId && v.status === 'succeeded') write(`\nUndo: keel compactions revert ${v.id} --agent ${v.agentId}\n`);
    if (v.degraded)
      write(
        `\nThe summary is extractive (no model summary could be had). Retry: keel compactions retry ${v.id} --agent ${v.agentId}\n`,
      );
    if (v.status === 'failed') write(`\nRetry: keel compactions retry ${v.id} --agent ${v.agentId}\n`);
    if (v.revertOf && detail.summary === '')
      write('\n(this revert restores no summary: the whole transcript is the window again)\n');
    else if (detail.summary !== null) write(`\n── summary ──\n${detail.summary}\n`);
    if (detail.diff) {
      write(`\n── changes since compaction ${detail.previousCompactionId} ──\n`);
      for (const line of detail.diff) write(`${line.op} ${line.text}\n`);
    } else if (detail.summary !== null) write('\n(first summary of this transcript: nothing to diff against)\n');
  }
  return { compaction: v, detail };
}

export interface CompactionsRetryOptions {
  readonly db: Kysely<Database>;
  readonly temporalClient: Client;
  readonly taskQueue: string;
  /** The agent the compaction must belong to. */
  readonly agentId: string;
  readonly id: string;
  /** The window of the agent that owns the compaction (default 200,000). */
  readonly contextWindowFor?: (agentId: string) => number;
  /** Recent tail kept verbatim (default `DEFAULTS.keepRecentTokens`, so a retry never hard-checkpoints by surprise). */
  readonly keepRecentTokens?: number;
  readonly json?: boolean;
  readonly write?: Write;
}

export interface CompactionsRetryResult {
  /** The compaction being run: the new one, or the one already running (null if it does not say). */
  readonly compactionId: string | null;
  readonly retryOf: string;
  readonly workflowId: string;
  /** False when a compaction was already running for the session (it was joined, not started). */
  readonly started: boolean;
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
 * `keel compactions retry <id>`: starts a fresh compaction (trigger `manual`, `retryOf` = id) for
 * the row's session. Idempotent: when a compaction already runs for the session, it is joined
 * (`USE_EXISTING`) and reported with `started: false`. Does not wait for the result.
 */
export async function compactionsRetry(opts: CompactionsRetryOptions): Promise<CompactionsRetryResult> {
  const row = await getCompaction(opts.db, opts.agentId, opts.id);
  if (!row) throw new CompactionNotFoundError(opts.id, opts.agentId);
  const trigger: CompactionTriggerName = 'manual';
  const input: CompactionWorkflowInput = {
    agentId: row.agent_id,
    sessionKey: row.session_key,
    sessionId: row.session_id,
    trigger,
    compactionId: randomUUID(),
    retryOf: row.id,
    keepRecentTokens: opts.keepRecentTokens ?? DEFAULTS.keepRecentTokens,
    contextWindowTokens: opts.contextWindowFor?.(row.agent_id) ?? DEFAULTS.contextWindowTokens,
  };
  const { workflowId, runningId } = await startOrJoinCompaction(opts.temporalClient, opts.taskQueue, input);
  const started = runningId === input.compactionId;
  const compactionId = started ? input.compactionId : runningId;
  const result: CompactionsRetryResult = { compactionId, retryOf: row.id, workflowId, started };
  if (!opts.json) {
    const write = opts.write ?? stderr;
    write(
      started
        ? `started compaction ${compactionId} for ${row.session_key} (retry of ${row.id}); follow it with: keel compactions show ${compactionId} --agent ${row.agent_id}\n`
        : `a compaction (${compactionId ?? 'id unknown'}) is already running for ${row.session_key}; not starting another\n`,
    );
  }
  return result;
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
