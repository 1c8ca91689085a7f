/**
 * `keel compactions [--failed] [--json]`, `keel compactions show <id>`, `keel compactions retry <id>`:
 * each returns the operation's view (printed as JSON on stdout with --json) and writes a readable
 * rendering for people to stderr.
 */
import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import {
  compactionRow,
  listCompactions,
  retryCompaction,
  showCompaction,
  type CompactionsListView,
  type CompactionsRetryResult,
} from '../operations/compactions/compactions';
import type { CompactionView } from '../operations/compactions/compaction-views';
import type { CompactionDetail } from '../operations/compactions/compaction-detail';
import { billingText } from '../operations/compactions/compaction-billing';
import { shownKey } from '../operations/shown-key';

/** Width of the tokens before → after bar. */
const BAR_WIDTH = 20;

/** Where people-text goes (stderr by default; tests capture it). */
export type Write = (text: string) => void;
const stderr: Write = (text) => void process.stderr.write(text);

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

/** What the presenters take beside the operation's input: with --json nothing is drawn (stdout carries the view). */
interface Presented {
  readonly json?: boolean;
  readonly write?: Write;
}

/** `keel compactions [--failed]`'s options. */
export interface CompactionsListOptions extends Presented {
  readonly db: Kysely<Database>;
  /** Only failed or degraded rows (those an operator retries). */
  readonly failed?: boolean;
  readonly agentId?: string;
  readonly limit?: number;
}

/** `keel compactions [--failed]`: newest first. Returns `{ compactions }`, with `--failed` also `pausedSessions`. */
export async function compactionsList(opts: CompactionsListOptions): Promise<CompactionsListView> {
  const list = await listCompactions(opts, opts);
  if (!opts.json) renderList(list, Boolean(opts.failed), opts.write ?? stderr);
  return list;
}

function renderList(list: CompactionsListView, failed: boolean, write: Write): void {
  for (const p of list.pausedSessions ?? []) {
    write(
      `auto-compaction PAUSED for ${shownKey(p.sessionKey)} (agent ${p.agentId}) after ${p.consecutiveFailures} failed compactions in a row; a successful retry or \`keel compact\` resumes it\n`,
    );
  }
  if (list.compactions.length === 0) write(failed ? 'no failed or degraded compactions\n' : 'no compactions\n');
  for (const v of list.compactions) {
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

/** `keel compactions show <id>`'s options. */
export interface CompactionsShowOptions extends Presented {
  readonly db: Kysely<Database>;
  /** The agent the compaction must belong to. */
  readonly agentId: string;
  readonly id: string;
}

/**
 * `keel compactions show <id>`: the row, the summary, the range it covers and the diff from the
 * session's previous summary. Returns `{ compaction, detail }`; throws `CompactionNotFoundError`.
 */
export async function compactionsShow(
  opts: CompactionsShowOptions,
): Promise<{ compaction: CompactionView; detail: CompactionDetail }> {
  const shown = await showCompaction(opts, opts);
  if (!opts.json) renderShown(shown.compaction, shown.detail, opts.write ?? stderr);
  return shown;
}

function renderShown(v: CompactionView, detail: CompactionDetail, write: Write): void {
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

/** `keel compactions retry <id>`'s options. */
export interface CompactionsRetryOptions extends Presented {
  readonly db: Kysely<Database>;
  readonly temporalClient: Client;
  readonly taskQueue: string;
  /** The agent the compaction must belong to. */
  readonly agentId: string;
  readonly id: string;
  /** The window of the agent that owns the compaction (default 200,000). */
  readonly contextWindowFor?: (agentId: string) => number;
  /** Recent tail kept verbatim (default `DEFAULTS.keepRecentTokens`). */
  readonly keepRecentTokens?: number;
}

/** `keel compactions retry <id>`: a fresh compaction for the row's session, or the running one joined. */
export async function compactionsRetry(opts: CompactionsRetryOptions): Promise<CompactionsRetryResult> {
  const result = await retryCompaction(opts, opts);
  if (!opts.json) {
    const { compactionId } = result;
    const { session_key: sessionKey, agent_id: agentId } = await compactionRow(opts.db, opts);
    (opts.write ?? stderr)(
      result.started
        ? `started compaction ${compactionId} for ${sessionKey} (retry of ${result.retryOf}); follow it with: keel compactions show ${compactionId} --agent ${agentId}\n`
        : `a compaction (${compactionId ?? 'id unknown'}) is already running for ${sessionKey}; not starting another\n`,
    );
  }
  return result;
}
