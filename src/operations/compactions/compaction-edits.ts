/**
 * The compaction edits: revert a compaction's window, or summarize its range again. Both run in the
 * session's compaction workflow (the same workflow id, started the way a retry starts it): at most one
 * compaction or edit runs per session, and a turn in flight sees the new window from its next model
 * call on, as after any compaction.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import type { z } from 'zod';
import { DEFAULTS } from '../../config/defaults';
import { getCompaction } from '../../store/compactions-repo';
import { CompactionEditError, planRerun, planRevert } from '../../store/compaction-lineage';
import type { CompactionRow } from '../../store/schema';
import type { CompactionOperation, CompactionWorkflowInput, CompactionWorkflowResult } from '../../protocol';
import { CompactionEditRefusedError } from '../errors';
import {
  compactionRow,
  startOrJoinCompaction,
  toCompactionView,
  type CompactionRef,
  type CompactionStoreDeps,
  type CompactionWorkflowDeps,
} from './compactions';
import type { compactionEdit } from './compaction-views';

/** What a revert or rerun returns: the new compaction record, and for a revert the later compactions it undid. */
export type CompactionEditResult = z.infer<typeof compactionEdit>;

/** The store's refusal of an edit (the window moved on, an entry was removed), as the operation's error. */
async function refusedEdit<T>(planned: Promise<T>): Promise<T> {
  return planned.catch((err: unknown) => {
    throw err instanceof CompactionEditError ? new CompactionEditRefusedError(err.message) : err;
  });
}

/**
 * Starts the edit in the session's compaction workflow and waits for it. When a compaction already
 * runs for the session, nothing is started (`USE_EXISTING` joins it): the edit is refused, to be run
 * again once that one has finished.
 */
async function runEdit(
  deps: CompactionWorkflowDeps,
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
    contextWindowTokens: deps.contextWindowFor?.(row.agent_id) ?? DEFAULTS.contextWindowTokens,
    operation,
    ...extra,
  };
  const { handle, workflowId, runningId } = await startOrJoinCompaction(deps.temporalClient, deps.taskQueue, input);
  if (runningId !== input.compactionId) {
    const running = runningId ?? 'id unknown';
    throw new CompactionEditRefusedError(
      `a compaction (${running}) is running for ${row.session_key}; nothing was changed: run this again when it has finished (keel compactions show ${running} --agent ${row.agent_id})`,
    );
  }
  const result = (await handle.result().catch((err: unknown) => {
    // The workflow's refusal (e.g. the window moved since the check above) is the message to show.
    throw err instanceof WorkflowFailedError
      ? new CompactionEditRefusedError(`${trigger} of ${row.id} failed: ${innermostMessage(err)}`)
      : err;
  })) as CompactionWorkflowResult;
  const written = await getCompaction(deps.db, row.agent_id, result.compactionId);
  if (!written) throw new Error(`compaction ${result.compactionId} finished but its row is missing`);
  return { compaction: toCompactionView(written), workflowId };
}

function innermostMessage(err: Error): string {
  let e: Error = err;
  while (e.cause instanceof Error) e = e.cause;
  return e.message;
}

/** What a revert of the compaction would restore: whose window (null: the whole transcript) and how many later compactions it undoes. */
export async function previewRevert(
  deps: CompactionStoreDeps,
  ref: CompactionRef,
): Promise<{ restoredWindowOf: string | null; laterCompactions: number }> {
  await compactionRow(deps.db, ref);
  const plan = await refusedEdit(planRevert(deps.db, ref.agentId, ref.id));
  return { restoredWindowOf: plan.restored.rangeOf ?? null, laterCompactions: plan.laterCompactions };
}

/**
 * Appends an entry that restores the session's window from before that compaction (its previous
 * summary and first kept entry, or the whole transcript before the first compaction). Nothing is
 * deleted; the revert is a compaction record of its own (trigger `revert`) and can itself be
 * reverted. Reverting an older compaction also undoes the later ones.
 */
export async function revertCompaction(
  deps: CompactionWorkflowDeps,
  ref: CompactionRef,
): Promise<CompactionEditResult> {
  const row = await compactionRow(deps.db, ref);
  const plan = await refusedEdit(planRevert(deps.db, ref.agentId, ref.id));
  const result = await runEdit(deps, row, { kind: 'revert', compactionId: row.id });
  return { ...result, laterCompactionsUndone: plan.laterCompactions };
}

/** A rerun: the compaction, and how to summarize its range again. */
export interface RerunInput extends CompactionRef {
  /** Another model of the agent's summarizer endpoint. */
  readonly model?: string | undefined;
  /** Extra focus for the summarizer. */
  readonly instructions?: string | undefined;
  /** Make the new summary the session's (only when the compaction's range is the session's window now). */
  readonly apply?: boolean | undefined;
}

/**
 * Summarizes that compaction's range again (the agent's summarizer, or `model`, with
 * `instructions`), as a new compaction record linked by `rerun_of`. Recorded only (its summary kept
 * on its row, for compare) unless `apply`: then it becomes the session's summary, and it can be
 * reverted like any compaction. Without a model the extractive summarizer writes it.
 */
export async function rerunCompaction(deps: CompactionWorkflowDeps, input: RerunInput): Promise<CompactionEditResult> {
  const row = await compactionRow(deps.db, input);
  const plan = await refusedEdit(planRerun(deps.db, input.agentId, input.id));
  if (input.apply && !plan.active) {
    throw new CompactionEditRefusedError(
      `compaction ${input.id}'s range is not the session's window now (a later compaction or a revert replaced it); rerun it without --apply to compare, or revert the later compactions first`,
    );
  }
  const operation: CompactionOperation = {
    kind: 'rerun',
    compactionId: row.id,
    apply: Boolean(input.apply),
    ...(input.model ? { model: input.model } : {}),
  };
  return runEdit(deps, row, operation, input.instructions ? { instructions: input.instructions } : {});
}
