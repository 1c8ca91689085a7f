/**
 * `keel compactions revert <id>`, `keel compactions rerun <id>` and `keel compactions compare <a> <b>`:
 * each returns the operation's view (printed as JSON with --json) and writes a readable rendering for
 * people to stderr.
 */
import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import {
  previewRevert,
  rerunCompaction,
  revertCompaction,
  type CompactionEditResult,
  type RerunInput,
} from '../operations/compactions/compaction-edits';
import { compareCompactions, type CompactionComparison } from '../operations/compactions/compare-compactions';
import type { CompactionView } from '../operations/compactions/compaction-views';
import { lineageLabel, tokensBar, type Write } from './compactions';
import { renderComparison, type ComparedSummary } from './compaction-compare';

const stderr: Write = (text) => void process.stderr.write(text);

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

/** `keel compactions revert <id>`: the session's window from before that compaction, recorded as a compaction. */
export async function compactionsRevert(opts: EditRunOptions): Promise<CompactionEditResult> {
  // The plan is read before the revert changes it: what the window was, and the later compactions undone.
  const preview = opts.json ? undefined : await previewRevert(opts, opts);
  const result = await revertCompaction(opts, opts);
  if (preview) {
    const write = opts.write ?? stderr;
    const v = result.compaction;
    const restored = preview.restoredWindowOf
      ? `the window of compaction ${preview.restoredWindowOf}`
      : 'the whole transcript (no summary)';
    write(`reverted ${opts.id}: ${v.sessionKey} sees ${restored} again, ${tokensBar(v.tokensBefore, v.tokensAfter)}\n`);
    const later = result.laterCompactionsUndone ?? 0;
    if (later > 0) write(`  this also undoes the ${later} later compaction(s)\n`);
    write(`  recorded as compaction ${v.id}; undo it with: keel compactions revert ${v.id} --agent ${v.agentId}\n`);
  }
  return result;
}

/** `keel compactions rerun <id>`'s options. */
export type CompactionsRerunOptions = EditRunOptions & RerunInput;

/** `keel compactions rerun <id>`: that compaction's range summarized again, recorded (or with --apply, applied). */
export async function compactionsRerun(opts: CompactionsRerunOptions): Promise<CompactionEditResult> {
  const result = await rerunCompaction(opts, opts);
  if (!opts.json) {
    const write = opts.write ?? stderr;
    const v = result.compaction;
    write(
      `rerun of ${opts.id} recorded as compaction ${v.id}${v.degraded ? ' (extractive summary)' : ''}; ${lineageLabel(v) ?? ''}\n`,
    );
    write(
      opts.apply
        ? `  applied: ${v.sessionKey} now sees this summary; undo with: keel compactions revert ${v.id} --agent ${v.agentId}\n`
        : `  compare: keel compactions compare ${opts.id} ${v.id} --agent ${v.agentId}\n`,
    );
  }
  return result;
}

/** `keel compactions compare <a> <b>`'s options. */
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

/** `keel compactions compare <a> <b>`: both summaries side by side (stacked when narrow) with the identifiers each kept. */
export async function compactionsCompare(opts: CompactionsCompareOptions): Promise<CompactionComparison> {
  const result = await compareCompactions(opts, opts);
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
    (opts.write ?? stderr)(renderComparison(compared(result.a), compared(result.b), result.coverage, width));
  }
  return result;
}
