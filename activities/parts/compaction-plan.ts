/**
 * Planning a compaction: the active window (or, for `keel compactions rerun`, an earlier compaction's
 * range) read from the database and split by token share with the real estimator. The plan the
 * workflow gets is ids and numbers.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { planRerun } from '../../src/store/compaction-lineage';
import { getSession } from '../../src/store/sessions-repo';
import { keptTailTokens } from '../../src/compaction/kept-tail';
import { planCompaction } from '../../src/compaction/plan-compaction';
import { withoutSubagentsInFlight } from '../../src/compaction/subagents-in-flight';
import { withoutTaskInProgress } from '../../src/compaction/task-in-progress';
import { FailureTypes } from '../../src/protocol';
import { editing, planningWindow, readRange, type CompactionContext } from './compaction-context';
import { rowTokens, toPlanEntries } from './compaction-entries';
import type { PlanCompactionInput, PlanCompactionResult, PlanRerunInput, PlanRerunResult } from './compaction-io';

/** Loads the active window (since the last compaction's firstKeptEntryId) and plans it with the real estimator. */
export async function planCompactionStep(
  ctx: CompactionContext,
  input: PlanCompactionInput,
): Promise<PlanCompactionResult> {
  const { deps, window, summarizer } = await planningWindow(ctx, input);
  const active = await loadActiveEntries(ctx.db, input.agentId, input.sessionId);
  // The last list of subagents in flight is stale by now: the record step writes the current one.
  const previousSummary = active.compaction
    ? withoutTaskInProgress(withoutSubagentsInFlight(active.compaction.summary))
    : undefined;
  // Chunks and the kept tail fit what the provider really takes, not only what Keel was told.
  const plan = planCompaction(toPlanEntries(active.rows), {
    contextWindow: window,
    keepRecentTokens: keptTailTokens(input.keepRecentTokens, input.trigger, window),
    estimate: deps.estimate,
    ...(previousSummary ? { previousSummary } : {}),
  });
  return { plan, ...(previousSummary ? { previousSummary } : {}), summarizer, windowOf: active.compaction?.id ?? null };
}

/** Plans summarizing an earlier compaction's range again (`keel compactions rerun`), like `planCompaction` plans the window. */
export async function planRerunStep(ctx: CompactionContext, input: PlanRerunInput): Promise<PlanRerunResult> {
  const target = await editing(() => planRerun(ctx.db, input.agentId, input.rerunOf));
  if (input.apply && !target.active) {
    throw ApplicationFailure.nonRetryable(
      `compaction ${input.rerunOf}'s range is not the session's window now (a later compaction or a revert replaced it); a rerun of it can be recorded but not applied`,
      FailureTypes.InvalidInput,
    );
  }
  const { deps, window, summarizer } = await planningWindow(ctx, input);
  const entries = await readRange(ctx, input, target.range);
  const previousSummary = target.previousSummary
    ? withoutTaskInProgress(withoutSubagentsInFlight(target.previousSummary))
    : undefined;
  // The whole range is summarized (nothing of it kept); the tail the original kept stays kept.
  const plan = planCompaction(entries, {
    contextWindow: window,
    keepRecentTokens: 0,
    estimate: deps.estimate,
    ...(previousSummary ? { previousSummary } : {}),
  });
  const active = await loadActiveEntries(ctx.db, input.agentId, input.sessionId);
  const session = await getSession(ctx.db, input.agentId, input.sessionKey);
  return {
    plan: {
      ...plan,
      firstKeptEntryId: target.firstKeptEntryId,
      keptTokens: target.active ? rowTokens(active.rows) : 0,
      tokensBefore: session?.context_tokens ?? plan.tokensBefore,
    },
    ...(previousSummary ? { previousSummary } : {}),
    summarizer,
    rangeOf: target.rangeOf,
  };
}
