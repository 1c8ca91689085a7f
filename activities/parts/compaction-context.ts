/**
 * What every compaction activity shares: the worker's deps and database, the compaction hooks, the
 * memo of received replies, and the small rules several of them apply (the agent's summarizer and
 * its spend limit, reading a planned range, the summary's budget).
 */
import { ApplicationFailure, log } from '@temporalio/activity';
import { depsForAgent, type ActivityDeps } from '../../src/runtime/deps';
import { CompactionHooks, type CompactionHookError } from '../../src/compaction/hooks';
import { spendLimited, spendLimitReason, summarizerSpendLimits } from '../../src/compaction/summarizer-spend';
import { summaryCharBudget } from '../../src/compaction/summary-budget';
import { CompactionEditError } from '../../src/store/compaction-lineage';
import { addSummarizerSpend, markSpendLimited, summarizerSpendSince } from '../../src/store/compactions-repo';
import type { PlanEntry } from '../../src/compaction/types';
import { FailureTypes } from '../../src/protocol';
import { agentSummarizer, type AgentSummarizer, type SummarizerSpendGuard } from './compaction-summarizer';
import { loadEntryRange, PlannedEntryMissingError } from './compaction-entries';
import type { CompactionRef, EntryRange, SummaryBudgetInput } from './compaction-io';
import { effectiveWindow } from './model-window';
import type { ReceivedReplies } from './received-replies';

/** The worker's deps, the hooks the application registered (none: a quiet set) and the replies memo. */
export interface CompactionContext {
  readonly allDeps: ActivityDeps;
  readonly db: ActivityDeps['db'];
  readonly hooks: CompactionHooks;
  /** The worker's memo of replies received and not stored yet (a summarizer retry reuses them). */
  readonly replies: ReceivedReplies;
}

/** The context the compaction activities of a worker share. */
export function compactionContext(allDeps: ActivityDeps, replies: ReceivedReplies): CompactionContext {
  return { allDeps, db: allDeps.db, hooks: allDeps.compactionHooks ?? new CompactionHooks(), replies };
}

/** An agent's deps and summarizer: each agent compacts with its own models and window (inputs carry the agentId). */
export function forAgent(
  ctx: CompactionContext,
  ref: CompactionRef,
): { deps: ActivityDeps; summarizer: AgentSummarizer } {
  const deps = depsForAgent(ctx.allDeps, ref.agentId);
  return {
    deps,
    summarizer: agentSummarizer(deps, {
      ...(ref.summarizerModel ? { model: ref.summarizerModel } : {}),
      spend: spendGuard(ctx, deps, ref),
      session: ref,
      replies: ctx.replies,
    }),
  };
}

/** Why this compaction may not call the summarizer (spend limit reached), recorded on its row and logged once per step. */
export async function spendRefusal(
  ctx: CompactionContext,
  deps: ActivityDeps,
  ref: CompactionRef,
): Promise<string | undefined> {
  const limits = summarizerSpendLimits(deps.config);
  if (!spendLimited(limits)) return undefined;
  const since = new Date(Date.now() - limits.windowMinutes * 60_000);
  const reason = spendLimitReason(await summarizerSpendSince(ctx.db, ref.agentId, ref.sessionKey, since), limits);
  if (reason) {
    await markSpendLimited(ctx.db, ref.agentId, ref.compactionId, reason);
    log.warn('summarizer spend limit reached; the compaction writes the extractive summary', {
      sessionKey: ref.sessionKey,
      compactionId: ref.compactionId,
      reason,
    });
  }
  return reason;
}

/** Each summarizer call is checked against the spend limit first and counted on the row after. */
export function spendGuard(ctx: CompactionContext, deps: ActivityDeps, ref: CompactionRef): SummarizerSpendGuard {
  return {
    beforeCall: async () => {
      const reason = await spendRefusal(ctx, deps, ref);
      if (reason) throw ApplicationFailure.nonRetryable(reason, FailureTypes.SummarizerSpendLimited);
    },
    afterCall: (billing, model) => addSummarizerSpend(ctx.db, ref.agentId, ref.compactionId, billing, model),
  };
}

/**
 * The window a plan fits: what Keel was told, within what the summarizer (when it may run) or the
 * chat model really takes. Also says whether the model summarizes (`extractive` otherwise).
 */
export async function planningWindow(
  ctx: CompactionContext,
  input: CompactionRef & { readonly contextWindowTokens: number },
): Promise<{ deps: ActivityDeps; window: number; summarizer: 'model' | 'extractive' }> {
  const { deps, summarizer } = forAgent(ctx, input);
  // A compaction provider summarizes even for an agent without a model of its own.
  const writer = summarizer.available || deps.config.compactionProvider !== undefined;
  const hasSummarizer = writer && !(await spendRefusal(ctx, deps, input));
  const window = Math.min(
    input.contextWindowTokens,
    hasSummarizer ? await summarizer.window() : await effectiveWindow(deps, deps.config.model, input),
  );
  return { deps, window, summarizer: hasSummarizer ? 'model' : 'extractive' };
}

/** Logs the hooks that failed (a hook never fails a compaction). */
export function logHookErrors(ref: CompactionRef, errors: CompactionHookError[]): void {
  for (const e of errors) {
    log.warn('compaction hook failed', {
      hook: e.hook,
      sessionKey: ref.sessionKey,
      compactionId: ref.compactionId,
      error: String(e.error),
    });
  }
}

/** The planned range's message entries; a plan naming an entry that is gone fails at once (retrying cannot fix it). */
export async function readRange(ctx: CompactionContext, ref: CompactionRef, range: EntryRange): Promise<PlanEntry[]> {
  try {
    return await loadEntryRange(ctx.db, ref.agentId, ref.sessionId, range.firstEntryId, range.lastEntryId);
  } catch (err) {
    if (err instanceof PlannedEntryMissingError)
      throw ApplicationFailure.nonRetryable(err.message, FailureTypes.InvalidInput);
    throw err;
  }
}

/** A compaction edit that cannot be done fails its workflow at once, with the reason (retrying cannot fix it). */
export async function editing<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof CompactionEditError)
      throw ApplicationFailure.nonRetryable(err.message, FailureTypes.InvalidInput);
    throw err;
  }
}

/** The summary's budget: grown with what it replaces when the workflow says, within the agent's window share (see summaryCharBudget). */
export function summaryBudget(
  deps: ActivityDeps,
  window: number,
  input: SummaryBudgetInput & { readonly previousSummary?: string },
): number {
  const replaced =
    input.summarizedTokens === undefined
      ? undefined
      : { summarizedTokens: input.summarizedTokens, previousSummaryChars: input.previousSummary?.length ?? 0 };
  return summaryCharBudget(window, replaced, deps.config.summaryMaxWindowShare);
}
