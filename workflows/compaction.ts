/**
 * One compaction of one session, in these steps:
 *   1. record a `compactions` row (running)
 *   2. plan: split the active window by token share, keep the recent tail, note oversized entries
 *   3. summarize: a threshold or manual compaction first asks once on the last turn's cached prompt
 *      (summary-on-prompt-cache.ts); otherwise the chunks as parallel activities (read by entry range, heartbeating), with the
 *      fallback chain full → without oversized → partial
 *   4. merge the labelled partial summaries
 *   5. quality guard: identifiers kept verbatim (one summarizer retry, then "Preserved identifiers"), cap
 *   6. write the compaction entry and the session counters in one transaction, idempotently
 *   7. mark the row succeeded with tokens after (skipped, with nothing written, when the summary and
 *      kept tail would not be smaller than what they replace, whoever asked)
 * When every model attempt fails, no model is configured, or the summarize phase passes its deadline
 * (derived from the plan: one summarizer-call budget per sequential step), the extractive summary is
 * written and the compaction is `degraded`: a compaction makes progress or fails visibly on its row.
 *
 * An operator's edit of an earlier compaction runs here too, so it never races a compaction of the
 * same session: a `revert` writes its restoring entry after step 1; a `rerun` plans the earlier
 * compaction's range instead of the window (step 2) and, unless applied, keeps its summary on its
 * row instead of writing an entry (step 6).
 */
import * as wf from '@temporalio/workflow';
import type { createCompactionActivities } from '../activities/compaction-activities';
import { summarizeWithFallback } from '../src/compaction/summarize-with-fallback';
import { SummarizationFailedError } from '../src/compaction/errors';
import { chunkSummaryInstructions, mergeSummaryInstructions } from '../src/compaction/prompts';
import { DEFAULTS } from '../src/config/defaults';
import { KeelAgentId, KeelSessionKey, KeelStatus, KeelTrigger } from '../src/temporal/search-attributes';
import {
  COMPACTION_TIMED_OUT,
  compactionProgressQuery,
  type CompactionProgress,
  type CompactionWorkflowInput,
  type CompactionWorkflowResult,
} from '../src/protocol';
import { chunkClaimChecks } from './compaction-chunks';
import type { CompactionPlan } from '../src/compaction/types';
import { describeFailure } from './describe-failure';

type Activities = ReturnType<typeof createCompactionActivities>;

/** Database steps: short; retried until the deadline cuts them off (a DB blip must not lose a compaction). */
const store = wf.proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '200ms', maximumInterval: '5s', maximumAttempts: 20 },
});

/** Summarizer retry policy, as OpenClaw's: a few attempts with a short backoff (a failing summarizer falls back, it is not waited for). */
const SUMMARIZE_RETRY = {
  maximumAttempts: 3,
  initialInterval: '500ms',
  maximumInterval: '5s',
  backoffCoefficient: 2,
} as const;
/** Heartbeats notice a dead worker long before start-to-close (a summary may stream for minutes). */
const DEFAULT_SUMMARIZE_HEARTBEAT_MS = DEFAULTS.summarizeHeartbeatTimeoutMs;

/** Runs one compaction of a session; see the steps above. Workflow id: `compactionWorkflowId(agentId, sessionKey)`. */
export async function compactionWorkflow(input: CompactionWorkflowInput): Promise<CompactionWorkflowResult> {
  const progress: { step: CompactionProgress['step'] } = { step: 'recording' };
  wf.setHandler(compactionProgressQuery, () => ({ compactionId: input.compactionId, step: progress.step }));
  setSearchAttributes(input, 'running');
  // Operators (and `compactionsRetry`) read which compaction this run is without a worker.
  wf.upsertMemo({ compactionId: input.compactionId });
  try {
    const result = await wf.CancellationScope.withTimeout(input.timeoutMs ?? DEFAULTS.compactionTimeoutMs, () =>
      compact(input, progress),
    );
    progress.step = 'done';
    setSearchAttributes(input, result.degraded ? 'degraded' : result.status);
    return result;
  } catch (err) {
    // A bug in workflow code is not a compaction failure: let it fail the task and be fixed.
    if (!(err instanceof wf.TemporalFailure)) throw err;
    const timedOut = wf.isCancellation(err) && !wf.CancellationScope.current().consideredCancelled;
    const error = timedOut
      ? `compaction timed out after ${input.timeoutMs ?? DEFAULTS.compactionTimeoutMs} ms`
      : describeFailure(err);
    progress.step = 'failed';
    await wf.CancellationScope.nonCancellable(() => store.failCompaction({ ...ref(input), error, now: now() }));
    setSearchAttributes(input, 'failed');
    if (timedOut) throw wf.ApplicationFailure.nonRetryable(error, COMPACTION_TIMED_OUT);
    throw err;
  }
}

async function compact(
  input: CompactionWorkflowInput,
  progress: { step: CompactionProgress['step'] },
): Promise<CompactionWorkflowResult> {
  const policy = input.identifierPolicy ?? 'strict';
  const summarizer = wf.proxyActivities<Activities>({
    // A real summary streams for minutes; heartbeats (on stream progress) notice a stalled one in seconds.
    startToCloseTimeout: DEFAULTS.summarizerCallBudgetMs,
    heartbeatTimeout: input.summarizeHeartbeatTimeoutMs ?? DEFAULT_SUMMARIZE_HEARTBEAT_MS,
    retry: SUMMARIZE_RETRY,
  });

  const op = input.operation;
  // 1. Record the attempt (a compaction id that was already recorded is answered from the record).
  const { recorded } = await store.recordCompactionStart({
    ...ref(input),
    trigger: input.trigger,
    retryOf: input.retryOf ?? null,
    workflowId: wf.workflowInfo().workflowId,
    now: now(),
    ...(input.memoryFlush ? { memoryFlush: input.memoryFlush } : {}),
    ...(op?.kind === 'revert' ? { revertOf: op.compactionId } : {}),
    ...(op?.kind === 'rerun' ? { rerunOf: op.compactionId } : {}),
  });
  if (recorded) {
    const { rowFinished, ...result } = recorded;
    if (!rowFinished) await store.finishCompaction({ ...ref(input), trigger: input.trigger, ...result, now: now() });
    return { compactionId: input.compactionId, ...result };
  }

  if (op?.kind === 'revert') {
    progress.step = 'writing';
    const reverted = await store.revertCompaction({ ...ref(input), revertOf: op.compactionId, now: now() });
    await store.finishCompaction({ ...ref(input), trigger: input.trigger, ...reverted, now: now() });
    return { compactionId: input.compactionId, ...reverted };
  }

  // 2. Plan (the activity reads the active window, or a rerun's range; the plan is ids and numbers).
  progress.step = 'planning';
  const rerun = op?.kind === 'rerun' ? op : undefined;
  const rerunPlan = rerun
    ? await store.planRerun({
        ...ref(input),
        rerunOf: rerun.compactionId,
        apply: rerun.apply,
        contextWindowTokens: input.contextWindowTokens,
      })
    : undefined;
  const planned =
    rerunPlan ??
    (await store.planCompaction({
      ...ref(input),
      contextWindowTokens: input.contextWindowTokens,
      trigger: input.trigger,
      ...(input.keepRecentTokens !== undefined ? { keepRecentTokens: input.keepRecentTokens } : {}),
    }));
  const { plan, previousSummary, summarizer: kind } = planned;
  if (plan.chunks.length === 0) {
    const skipped = {
      status: 'skipped',
      degraded: false,
      tokensBefore: plan.tokensBefore,
      tokensAfter: plan.tokensBefore,
      firstKeptEntryId: plan.firstKeptEntryId,
      entryId: null,
    } as const;
    await store.finishCompaction({ ...ref(input), trigger: input.trigger, ...skipped, now: now() });
    return { compactionId: input.compactionId, ...skipped, skip: { reason: 'nothing-to-summarize' } };
  }
  const range = {
    firstEntryId: plan.chunks[0].firstEntryId,
    lastEntryId: plan.chunks[plan.chunks.length - 1].lastEntryId,
  };
  const previous = previousSummary ? { previousSummary } : {};

  // 3–5. Summarize chunks in parallel, merge, guard identifiers: within a deadline derived from the plan.
  progress.step = 'summarizing';
  let summary: string | undefined;
  if (kind === 'model') {
    // A threshold or manual compaction first asks for the summary on the conversation's own prompt cache.
    const onCache = followsLastTurn(input);
    const deadline = summarizePhaseDeadlineMs(plan.chunks.length, onCache);
    try {
      summary = await wf.CancellationScope.withTimeout(deadline, () =>
        summarizeAndGuard(input, plan, range, previousSummary, summarizer, progress, onCache),
      );
    } catch (err) {
      // Past the phase deadline (not the whole run's): the extractive summary still reclaims the tokens.
      if (!wf.isCancellation(err) || wf.CancellationScope.current().consideredCancelled) throw err;
      wf.log.warn('the summarizer passed its deadline; writing the extractive summary', {
        sessionKey: input.sessionKey,
        deadlineMs: deadline,
      });
    }
  }
  const degraded = summary === undefined;
  if (summary === undefined) {
    summary = await store.extractiveSummary({
      ...ref(input),
      ...range,
      ...previous,
      identifierPolicy: policy,
      summarizedTokens: plan.summarizedTokens,
    });
  }

  // 6. Compaction entry + session counters, one transaction, once (a rerun not applied: its row keeps the summary).
  progress.step = 'writing';
  if (rerun && !rerun.apply) {
    const { tokensAfter } = await store.storeRerunSummary({ ...ref(input), summary, keptTokens: plan.keptTokens });
    const recordedOnly = {
      compactionId: input.compactionId,
      status: 'succeeded',
      degraded,
      tokensBefore: plan.tokensBefore,
      tokensAfter,
      firstKeptEntryId: plan.firstKeptEntryId,
      entryId: null,
    } as const;
    await store.finishCompaction({ ...ref(input), trigger: input.trigger, ...recordedOnly, now: now() });
    return recordedOnly;
  }
  const written = await store.writeCompactionRecord({
    ...ref(input),
    summary,
    firstKeptEntryId: plan.firstKeptEntryId,
    tokensBefore: plan.tokensBefore,
    keptTokens: plan.keptTokens,
    now: now(),
    ...(input.promptOverheadTokens !== undefined ? { promptOverheadTokens: input.promptOverheadTokens } : {}),
    ...(rerun && rerunPlan ? { lineage: { rerunOf: rerun.compactionId, rangeOf: rerunPlan.rangeOf } } : {}),
  });

  if (written.entryId === null) {
    // The summary and the kept tail would not be smaller than what they replace: nothing was written,
    // and the compaction is not reported as a success.
    const unreclaimed = {
      compactionId: input.compactionId,
      status: 'skipped',
      degraded,
      tokensBefore: plan.tokensBefore,
      tokensAfter: plan.tokensBefore,
      firstKeptEntryId: plan.firstKeptEntryId,
      entryId: null,
    } as const;
    await store.finishCompaction({ ...ref(input), trigger: input.trigger, ...unreclaimed, now: now() });
    return { ...unreclaimed, skip: { reason: 'no-gain', wouldBeTokens: written.tokensAfter } };
  }

  // 7. Row succeeded (degraded when the summary is extractive; an operator may retry it).
  const result = {
    compactionId: input.compactionId,
    status: 'succeeded',
    degraded,
    tokensBefore: plan.tokensBefore,
    tokensAfter: written.tokensAfter,
    firstKeptEntryId: plan.firstKeptEntryId ?? written.entryId,
    entryId: written.entryId,
  } as const;
  await store.finishCompaction({ ...ref(input), trigger: input.trigger, ...result, now: now() });
  return result;
}

/** Chunk summaries and their merge through the fallback chain, then the identifier guard; undefined → extractive. */
async function summarizeAndGuard(
  input: CompactionWorkflowInput,
  plan: CompactionPlan,
  range: { firstEntryId: string; lastEntryId: string },
  previousSummary: string | undefined,
  summarizer: Activities,
  progress: { step: CompactionProgress['step'] },
  onCache: boolean,
): Promise<string | undefined> {
  const policy = input.identifierPolicy ?? 'strict';
  const previous = previousSummary ? { previousSummary } : {};
  let summary: string | undefined;
  const options = {
    identifierPolicy: policy,
    ...(input.instructions ? { customInstructions: input.instructions } : {}),
  };
  const { chunks, summarizeChunk } = chunkClaimChecks(plan, {
    chunk: (i, mode, prev, instructions) =>
      summarizer.summarizeChunk({
        ...ref(input),
        firstEntryId: plan.chunks[i].firstEntryId,
        lastEntryId: plan.chunks[i].lastEntryId,
        mode,
        oversized: plan.oversized,
        instructions,
        ...(prev ? { previousSummary: prev } : {}),
      }),
    text: (text, prev, instructions) =>
      summarizer.summarizeText({ ...ref(input), text, instructions, ...(prev ? { previousSummary: prev } : {}) }),
  });
  // The whole range in one call on the last turn's cached prefix; when that does not apply, the chunks.
  const cached: { summary?: string } = onCache
    ? await summarizer
        .summarizeOnCache({ ...ref(input), ...range, instructions: chunkSummaryInstructions(options), ...previous })
        .catch((err: unknown) => {
          if (wf.isCancellation(err)) throw err;
          return {}; // the chunks still summarize
        })
    : {};
  if (cached.summary !== undefined) summary = cached.summary;
  else
    try {
      const merged = await summarizeWithFallback({
        chunks,
        ...previous,
        chunkInstructions: chunkSummaryInstructions(options),
        mergeInstructions: mergeSummaryInstructions(options),
        summarizeChunk,
        isTerminal: wf.isCancellation,
      });
      summary = merged.summary;
    } catch (err) {
      if (!(err instanceof SummarizationFailedError)) throw err;
      wf.log.warn('every summarizer attempt failed; writing the extractive summary', {
        sessionKey: input.sessionKey,
        error: err.message,
      });
    }

  // Quality guard: identifiers, decisions and instructions verbatim, one summarizer retry with the missing ones, then append; cap.
  if (summary !== undefined) {
    progress.step = 'guarding';
    const guardInput = {
      ...ref(input),
      ...range,
      ...previous,
      identifierPolicy: policy,
      summarizedTokens: plan.summarizedTokens,
    };
    let guarded = await store.guardSummary({ ...guardInput, summary });
    // `unkept` is absent from guard results recorded before it existed: those histories replay as they ran.
    const unkept = guarded.unkept ?? [];
    if (!guarded.blank && (guarded.missing.length > 0 || unkept.length > 0)) {
      const revised = await summarizer
        .reviseSummary({ ...ref(input), summary, missing: guarded.missing, unkept, identifierPolicy: policy })
        .catch((err: unknown) => {
          if (wf.isCancellation(err)) throw err;
          return undefined; // the guard appends what is missing anyway
        });
      if (revised?.trim()) guarded = await store.guardSummary({ ...guardInput, summary: revised });
    }
    summary = guarded.blank ? undefined : guarded.summary;
  }
  return summary;
}

/** A threshold or manual compaction comes right after the session's last turn; an overflow's or an operator's edit does not. */
function followsLastTurn(input: CompactionWorkflowInput): boolean {
  return (input.trigger === 'threshold' || input.trigger === 'manual') && input.operation === undefined;
}

/** One summarizer-call budget per sequential step: the call on the prompt cache, the chunks (in parallel), the merge, the identifier revision. */
function summarizePhaseDeadlineMs(chunks: number, onCache: boolean): number {
  return ((chunks > 1 ? 3 : 2) + (onCache ? 1 : 0)) * DEFAULTS.summarizerCallBudgetMs;
}

function ref(input: CompactionWorkflowInput) {
  const model = input.operation?.kind === 'rerun' ? input.operation.model : undefined;
  return {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    compactionId: input.compactionId,
    ...(model ? { summarizerModel: model } : {}),
  };
}

function now(): string {
  return new Date().toISOString();
}

function setSearchAttributes(input: CompactionWorkflowInput, status: string): void {
  wf.upsertSearchAttributes([
    { key: KeelAgentId, value: input.agentId },
    { key: KeelSessionKey, value: input.sessionKey },
    { key: KeelTrigger, value: input.trigger },
    { key: KeelStatus, value: status },
  ]);
}
