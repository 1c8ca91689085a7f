/**
 * `keel compactions revert <id>`, `keel compactions rerun <id>` and `keel compactions compare <a> <b>`.
 * Revert and rerun run in the session's compaction workflow (the same workflow id, started the way
 * `compactions retry` starts it): at most one compaction or edit runs per session, and a turn in
 * flight sees the new window from its next model call on, as after any compaction.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import { DEFAULTS } from '../config/defaults';
import { getCompaction } from '../store/compactions-repo';
import { CompactionEditError, planRerun, planRevert } from '../store/compaction-lineage';
import { getEntry, MESSAGE_TYPES, restoresNoSummary, summarizedRangeOf } from '../store/entries-repo';
import type { CompactionRow, Database } from '../store/schema';
import { decodeEntryRows } from '../store/entry-row';
import type { AgentMessage } from '../context/types';
import { sourceIdentifiers } from '../compaction/message-identifiers';
import { identifierCoverage, type IdentifierCoverage } from '../compaction/summary-coverage';
import { type CompactionOperation, type CompactionWorkflowInput, type CompactionWorkflowResult } from '../protocol';
import {
  CompactionNotFoundError,
  lineageLabel,
  startOrJoinCompaction,
  toCompactionView,
  tokensBar,
  type CompactionView,
  type Write,
} from './compactions';
import { summaryOf } from './compaction-detail';
import { renderComparison, type ComparedSummary } from './compaction-compare';

const stderr: Write = (text) => void process.stderr.write(text);

/** Another compaction of the session is running: the edit was not started (nothing changed). */
export class CompactionBusyError extends Error {
  override readonly name = 'CompactionBusyError';
}

interface EditRunOptions {
  readonly db: Kysely<Database>;
  readonly temporalClient: Client;
  readonly taskQueue: string;
  /** The agent the compaction must belong to. */
  readonly agentId: string;
  readonly id: string;
  /** The window of the agent that owns the compaction (default 200,000). */
  readonly contextWindowFor?: ((agentId: string) => number) | undefined;
  readonly json?: boolean | undefined;
  readonly write?: Write | undefined;
}

/** What a revert or rerun returns: the new compaction record and what it did. */
export interface CompactionEditResult {
  readonly compaction: CompactionView;
  readonly workflowId: string;
}

/**
 * Starts the edit in the session's compaction workflow and waits for it. When a compaction already
 * runs for the session, nothing is started (`USE_EXISTING` joins it): the edit fails with
 * `CompactionBusyError`, to be run again once that one has finished.
 */
async function runEdit(
  opts: EditRunOptions,
  row: CompactionRow,
  operation: CompactionOperation,
  extra: Partial<CompactionWorkflowInput> = {},
): Promise<CompactionEditResult> {
  const trigger = operation.kind;
  const input: CompactionWorkflowInput = {
    agentId: row.agent_id,
    sessionKey: row.session_key,
    sessionId: row.session_id,
    trigger,
    compactionId: randomUUID(),
    contextWindowTokens: opts.contextWindowFor?.(row.agent_id) ?? DEFAULTS.contextWindowTokens,
    operation,
    ...extra,
  };
  const { handle, workflowId, runningId } = await startOrJoinCompaction(opts.temporalClient, opts.taskQueue, input);
  if (runningId !== input.compactionId) {
    const running = runningId ?? 'id unknown';
    throw new CompactionBusyError(
      `a compaction (${running}) is running for ${row.session_key}; nothing was changed: run this again when it has finished (keel compactions show ${running} --agent ${row.agent_id})`,
    );
  }
  const result = (await handle.result().catch((err: unknown) => {
    // The workflow's refusal (e.g. the window moved since the check above) is the message to show.
    throw err instanceof WorkflowFailedError
      ? new CompactionEditError(`${trigger} of ${row.id} failed: ${innermostMessage(err)}`)
      : err;
  })) as CompactionWorkflowResult;
  const written = await getCompaction(opts.db, row.agent_id, result.compactionId);
  if (!written) throw new Error(`compaction ${result.compactionId} finished but its row is missing`);
  return { compaction: toCompactionView(written), workflowId };
}

function innermostMessage(err: Error): string {
  let e: Error = err;
  while (e.cause instanceof Error) e = e.cause;
  return e.message;
}

/** The row an edit names, with the reason it cannot be edited said up front (the workflow checks again). */
async function editedRow(db: Kysely<Database>, agentId: string, id: string): Promise<CompactionRow> {
  const row = await getCompaction(db, agentId, id);
  if (!row) throw new CompactionNotFoundError(id, agentId);
  return row;
}

/**
 * `keel compactions revert <id>`: appends an entry that restores the session's window from before
 * that compaction (its previous summary and first kept entry, or the whole transcript before the
 * first compaction). Nothing is deleted; the revert is a compaction record of its own (trigger
 * `revert`) and can itself be reverted. Reverting an older compaction also undoes the later ones.
 */
export async function compactionsRevert(
  opts: EditRunOptions,
): Promise<CompactionEditResult & { laterCompactionsUndone: number }> {
  const row = await editedRow(opts.db, opts.agentId, opts.id);
  const plan = await planRevert(opts.db, opts.agentId, opts.id);
  const result = await runEdit(opts, row, { kind: 'revert', compactionId: row.id });
  if (!opts.json) {
    const write = opts.write ?? stderr;
    const v = result.compaction;
    const restored = plan.restored.rangeOf
      ? `the window of compaction ${plan.restored.rangeOf}`
      : 'the whole transcript (no summary)';
    write(
      `reverted ${row.id}: ${row.session_key} sees ${restored} again, ${tokensBar(v.tokensBefore, v.tokensAfter)}\n`,
    );
    if (plan.laterCompactions > 0) write(`  this also undoes the ${plan.laterCompactions} later compaction(s)\n`);
    write(`  recorded as compaction ${v.id}; undo it with: keel compactions revert ${v.id} --agent ${v.agentId}\n`);
  }
  return { ...result, laterCompactionsUndone: plan.laterCompactions };
}

export interface CompactionsRerunOptions extends EditRunOptions {
  /** Another model of the agent's summarizer endpoint. */
  readonly model?: string | undefined;
  /** Extra focus for the summarizer. */
  readonly instructions?: string | undefined;
  /** Make the new summary the session's (only when the compaction's range is the session's window now). */
  readonly apply?: boolean | undefined;
}

/**
 * `keel compactions rerun <id>`: summarizes that compaction's range again (the agent's summarizer,
 * or `model`, with `instructions`), as a new compaction record linked by `rerun_of`. Recorded only
 * (its summary kept on its row, for `compare`) unless `apply`: then it becomes the session's summary,
 * and it can be reverted like any compaction. Without a model the extractive summarizer writes it.
 */
export async function compactionsRerun(opts: CompactionsRerunOptions): Promise<CompactionEditResult> {
  const row = await editedRow(opts.db, opts.agentId, opts.id);
  const plan = await planRerun(opts.db, opts.agentId, opts.id);
  if (opts.apply && !plan.active) {
    throw new CompactionEditError(
      `compaction ${opts.id}'s range is not the session's window now (a later compaction or a revert replaced it); rerun it without --apply to compare, or revert the later compactions first`,
    );
  }
  const operation: CompactionOperation = {
    kind: 'rerun',
    compactionId: row.id,
    apply: Boolean(opts.apply),
    ...(opts.model ? { model: opts.model } : {}),
  };
  const result = await runEdit(opts, row, operation, opts.instructions ? { instructions: opts.instructions } : {});
  if (!opts.json) {
    const write = opts.write ?? stderr;
    const v = result.compaction;
    write(
      `rerun of ${row.id} recorded as compaction ${v.id}${v.degraded ? ' (extractive summary)' : ''}; ${lineageLabel(v) ?? ''}\n`,
    );
    write(
      opts.apply
        ? `  applied: ${row.session_key} now sees this summary; undo with: keel compactions revert ${v.id} --agent ${v.agentId}\n`
        : `  compare: keel compactions compare ${row.id} ${v.id} --agent ${v.agentId}\n`,
    );
  }
  return result;
}

/** The message entries of the range a compaction's summary stands for (none for a revert to no summary). */
async function rangeMessages(db: Kysely<Database>, row: CompactionRow): Promise<AgentMessage[]> {
  let entryRow = row.entry_id ? await getEntry(db, row.agent_id, row.session_id, row.entry_id) : undefined;
  if (!entryRow && row.rerun_of) {
    const original = await getCompaction(db, row.agent_id, row.rerun_of);
    entryRow = original?.entry_id ? await getEntry(db, row.agent_id, row.session_id, original.entry_id) : undefined;
  }
  const entry = entryRow?.type === 'compaction' ? entryRow.payload : undefined;
  if (!entryRow || !entry || restoresNoSummary(entry)) return [];
  const rangeRow = entry.rangeOf ? await getEntry(db, row.agent_id, row.session_id, entry.rangeOf) : entryRow;
  const range =
    rangeRow?.type === 'compaction' ? await summarizedRangeOf(db, row.agent_id, row.session_id, rangeRow) : undefined;
  if (!range) return [];
  const seqOf = async (id: string) => Number((await getEntry(db, row.agent_id, row.session_id, id))?.seq ?? 0);
  const rows = await db
    .selectFrom('transcript_entries')
    // The key columns with the payload: a value sealed at rest opens only in its own row.
    .select(['agent_id', 'session_id', 'id', 'type', 'payload'])
    .where('agent_id', '=', row.agent_id)
    .where('session_id', '=', row.session_id)
    .where('seq', '>=', await seqOf(range.firstEntryId))
    .where('seq', '<=', await seqOf(range.lastEntryId))
    .where('type', 'in', MESSAGE_TYPES)
    .orderBy('seq', 'asc')
    .execute();
  return decodeEntryRows(rows).flatMap((r): AgentMessage[] => {
    const e = r.payload;
    if (e.type === 'message') return [e.message];
    if (e.type === 'custom_message') return [{ role: 'user', content: e.content }];
    return [];
  });
}

export interface CompactionsCompareOptions {
  readonly db: Kysely<Database>;
  readonly agentId: string;
  readonly a: string;
  readonly b: string;
  /** Terminal width (default: stdout's or stderr's columns, else 100). */
  readonly width?: number;
  readonly json?: boolean;
  readonly write?: Write;
}

export interface CompactionComparison {
  readonly a: CompactionView & { readonly summary: string };
  readonly b: CompactionView & { readonly summary: string };
  readonly coverage: IdentifierCoverage;
}

/**
 * `keel compactions compare <a> <b>`: both summaries side by side (stacked on a narrow terminal) and
 * the identifier coverage of each: the protected identifiers of the summarized range(s), how many
 * each summary kept verbatim, and the ones only one of them kept.
 */
export async function compactionsCompare(opts: CompactionsCompareOptions): Promise<CompactionComparison> {
  const side = async (id: string) => {
    const row = await editedRow(opts.db, opts.agentId, id);
    const summary = await summaryOf(opts.db, row);
    if (summary === null)
      throw new CompactionEditError(`compaction ${id} has no summary to compare (status ${row.status})`);
    return { row, summary };
  };
  const [a, b] = [await side(opts.a), await side(opts.b)];
  const messagesA = await rangeMessages(opts.db, a.row);
  const messagesB =
    a.row.entry_id === b.row.entry_id && a.row.rerun_of === b.row.rerun_of
      ? messagesA
      : await rangeMessages(opts.db, b.row);
  const identifiers = [
    ...new Set([
      ...sourceIdentifiers(undefined, messagesA, 'strict'),
      ...sourceIdentifiers(undefined, messagesB, 'strict'),
    ]),
  ];
  const coverage = identifierCoverage(identifiers, a.summary, b.summary);
  const result: CompactionComparison = {
    a: { ...toCompactionView(a.row), summary: a.summary },
    b: { ...toCompactionView(b.row), summary: b.summary },
    coverage,
  };
  if (!opts.json) {
    const label = (v: CompactionView) =>
      [v.trigger, lineageLabel(v), v.summarizerModel ? `model ${v.summarizerModel}` : v.degraded ? 'extractive' : null]
        .filter(Boolean)
        .join(', ');
    const compared = (v: CompactionComparison['a']): ComparedSummary => ({
      id: v.id,
      label: label(v),
      summary: v.summary,
    });
    const width = opts.width ?? process.stderr.columns ?? process.stdout.columns ?? 100;
    (opts.write ?? stderr)(renderComparison(compared(result.a), compared(result.b), coverage, width));
  }
  return result;
}
