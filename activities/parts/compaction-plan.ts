/**
 * Planning a compaction: the active window (or, for `keel compactions rerun`, an earlier compaction's
 * range) read from the database and split by token share with the real estimator. The plan the
 * workflow gets is ids and numbers.
 */
import { ApplicationFailure, log } from '@temporalio/activity';
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
import { engineOf } from './context-engine';
import type { PlanEntry } from '../../src/compaction/types';
import type { ActivityDeps } from '../../src/runtime/deps';
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
  const entries = toPlanEntries(active.rows);
  const engineCompacted = await compactedByEngine(deps, input, entries, window);
  // Chunks and the kept tail fit what the provider really takes, not only what Keel was told; an
  // engine that compacted itself leaves Keel nothing to summarize (the whole window is kept).
  const plan = planCompaction(entries, {
    contextWindow: window,
    // The request's tail, else the agent's configured one (manual compactions included), else the default.
    keepRecentTokens: engineCompacted
      ? Number.MAX_SAFE_INTEGER
      : keptTailTokens(input.keepRecentTokens ?? deps.config.keepRecentTokens, input.trigger, window),
    estimate: deps.estimate,
    ...(previousSummary ? { previousSummary } : {}),
  });
  return { plan, ...(previousSummary ? { previousSummary } : {}), summarizer, windowOf: active.compaction?.id ?? null };
}

/**
 * Asks the agent's context engine to compact first (the engine slot's `compact`): true when the
 * engine did the work itself, false when it hands it to Keel's compaction (every built-in engine).
 */
async function compactedByEngine(
  deps: ActivityDeps,
  input: PlanCompactionInput,
  entries: readonly PlanEntry[],
  window: number,
): Promise<boolean> {
  const engine = engineOf(deps);
  const result = await engine.compact({
    sessionId: input.sessionId,
    sessionKey: input.sessionKey,
    messages: entries.map((e) => e.message),
    tokenBudget: window,
    trigger: input.trigger,
  });
  if (result.delegated) return false;
  log.info(`context engine ${engine.engine.id} compacted the session itself; Keel's compaction writes nothing`, {
    compacted: result.compacted,
    ...(result.reason ? { reason: result.reason } : {}),
    ...(result.tokensBefore !== undefined ? { tokensBefore: result.tokensBefore } : {}),
    ...(result.tokensAfter !== undefined ? { tokensAfter: result.tokensAfter } : {}),
  });
  return true;
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
