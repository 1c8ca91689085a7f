/**
 * The steps of one compaction (`workflows/compaction.ts` lists them in order): each is one or a few
 * activities, named for what it does, with the compaction's input held once for all of them.
 */
import * as wf from '@temporalio/workflow';
import type { createCompactionActivities } from '../activities/compaction-activities';
import type { PlanCompactionResult, WriteCompactionRecordResult } from '../activities/parts/compaction-io';
import { summarizeWithFallback } from '../src/compaction/summarize-with-fallback';
import { SummarizationFailedError } from '../src/compaction/errors';
import { chunkSummaryInstructions, mergeSummaryInstructions } from '../src/compaction/prompts';
import { DEFAULTS } from '../src/config/defaults';
import type {
  CompactionOperation,
  CompactionProgress,
  CompactionSkip,
  CompactionWorkflowInput,
  CompactionWorkflowResult,
} from '../src/protocol';
import type { CompactionOutcome } from '../src/compaction/types';
import type { CompactionCycleSteps } from '../src/compaction/compaction-cycle';
import type { IdentifierPolicy } from '../src/compaction/identifiers';
import { chunkClaimChecks } from './compaction-chunks';

type Activities = ReturnType<typeof createCompactionActivities>;

/**
 * Database steps: short; retried until the deadline cuts them off (a DB blip must not lose a
 * compaction). They heartbeat while they run, so a killed worker's step runs again within the
 * heartbeat timeout.
 */
export const store = wf.proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: DEFAULTS.storeHeartbeatTimeoutMs,
  retry: { initialInterval: '200ms', maximumInterval: '5s', maximumAttempts: 20 },
});

/** Summarizer retry policy, as OpenClaw's: a few attempts with a short backoff (a failing summarizer falls back, it is not waited for). */
const SUMMARIZE_RETRY = {
  maximumAttempts: 3,
  initialInterval: '500ms',
  maximumInterval: '5s',
  backoffCoefficient: 2,
} as const;

/** A plan of the window or of a rerun's range (`rangeOf`: the entry whose range a rerun summarizes again). */
export type Planned = PlanCompactionResult & { readonly rangeOf?: string };

/** The planned range of entries, from the first chunk's first entry to the last chunk's last. */
type PlannedRange = { firstEntryId: string; lastEntryId: string };

/** Which step a compaction is at, as its progress query answers. */
export type Progress = { step: CompactionProgress['step'] };

/** One compaction's steps over its input; the workflow calls them in order. */
export class CompactionSteps implements CompactionCycleSteps<Planned, CompactionWorkflowResult> {
  private readonly summarizer: Activities;
  private readonly policy: IdentifierPolicy;
  private readonly rerun: Extract<CompactionOperation, { kind: 'rerun' }> | undefined;
  /** Why no model summary could be had (each failed attempt's cause), for the row of a degraded compaction. */
  private extractiveBecause: string | undefined;

  constructor(
    private readonly input: CompactionWorkflowInput,
    private readonly progress: Progress,
  ) {
    this.policy = input.identifierPolicy ?? 'strict';
    this.rerun = input.operation?.kind === 'rerun' ? input.operation : undefined;
    this.summarizer = wf.proxyActivities<Activities>({
      // A real summary streams for minutes; heartbeats (on stream progress) notice a stalled one in seconds.
      startToCloseTimeout: DEFAULTS.summarizerCallBudgetMs,
      heartbeatTimeout: input.summarizeHeartbeatTimeoutMs ?? DEFAULTS.summarizeHeartbeatTimeoutMs,
      retry: SUMMARIZE_RETRY,
    });
  }

  /** Records the attempt; a compaction id already recorded is answered from its record (its row finished if need be). */
  async recordStart(): Promise<CompactionWorkflowResult | undefined> {
    const { input } = this;
    const op = input.operation;
    const { recorded } = await store.recordCompactionStart({
      ...this.ref(),
      trigger: input.trigger,
      retryOf: input.retryOf ?? null,
      workflowId: wf.workflowInfo().workflowId,
      now: now(),
      ...(input.memoryFlush ? { memoryFlush: input.memoryFlush } : {}),
      ...(op?.kind === 'revert' ? { revertOf: op.compactionId } : {}),
      ...(op?.kind === 'rerun' ? { rerunOf: op.compactionId } : {}),
    });
    if (!recorded) return undefined;
    const { rowFinished, ...result } = recorded;
    if (!rowFinished) await this.markFinished(result);
    return { compactionId: input.compactionId, ...result };
  }

  /** An operator's revert: the entry that restores the earlier window, then the row. */
  async revert(revertOf: string): Promise<CompactionWorkflowResult> {
    this.progress.step = 'writing';
    const reverted = await store.revertCompaction({ ...this.ref(), revertOf, now: now() });
    return this.finish(reverted);
  }

  /** Plans the active window, or a rerun's range (the activity reads it; the plan is ids and numbers). */
  async plan(): Promise<Planned> {
    const { input, rerun } = this;
    this.progress.step = 'planning';
    if (rerun) {
      return store.planRerun({
        ...this.ref(),
        rerunOf: rerun.compactionId,
        apply: rerun.apply,
        contextWindowTokens: input.contextWindowTokens,
      });
    }
    return store.planCompaction({
      ...this.ref(),
      contextWindowTokens: input.contextWindowTokens,
      trigger: input.trigger,
      ...(input.keepRecentTokens !== undefined ? { keepRecentTokens: input.keepRecentTokens } : {}),
    });
  }

  /** Nothing before the kept tail to summarize: the row is skipped and nothing is written. */
  nothingToSummarize({ plan }: Planned): Promise<CompactionWorkflowResult> {
    return this.finish({ ...this.unchanged(plan), degraded: false, entryId: null }, { reason: 'nothing-to-summarize' });
  }

  /**
   * The model's summary of the planned range (merged and guarded), within a deadline derived from the
   * plan; undefined when every attempt failed or the deadline passed, so the extractive one is written.
   */
  async modelSummary(planned: Planned): Promise<string | undefined> {
    this.progress.step = 'summarizing';
    if (planned.summarizer !== 'model') return undefined;
    // A threshold or manual compaction first asks for the summary on the conversation's own prompt cache.
    const onCache = followsLastTurn(this.input);
    const deadline = summarizePhaseDeadlineMs(planned.plan.chunks.length, onCache);
    try {
      return await wf.CancellationScope.withTimeout(deadline, () => this.summarizeAndGuard(planned, onCache));
    } catch (err) {
      // Past the phase deadline (not the whole run's): the extractive summary still reclaims the tokens.
      if (!wf.isCancellation(err) || wf.CancellationScope.current().consideredCancelled) throw err;
      wf.log.warn('the summarizer passed its deadline; writing the extractive summary', {
        sessionKey: this.input.sessionKey,
        deadlineMs: deadline,
      });
      this.extractiveBecause = `the summarizer passed its deadline of ${deadline} ms`;
      return undefined;
    }
  }

  /** The deterministic summary of the planned range, written when no model summary could be had. */
  extractiveSummary(planned: Planned): Promise<string> {
    return store.extractiveSummary(this.guardInput(planned));
  }

  /**
   * Writes the summary: the compaction entry and session counters in one transaction, once; a rerun
   * not applied keeps it on its row instead. A summary that would not make the context smaller is
   * not written, and the compaction is not reported as a success.
   */
  async write(planned: Planned, summary: string, degraded: boolean): Promise<CompactionWorkflowResult> {
    const { plan } = planned;
    this.progress.step = 'writing';
    if (this.rerun && !this.rerun.apply) return this.keepOnRow(plan, summary, degraded);
    const written = await this.writeRecord(planned, summary);
    if (written.superseded)
      return this.finish({ ...this.unchanged(plan), degraded, entryId: null }, { reason: 'superseded' });
    if (written.entryId === null) {
      return this.finish(
        { ...this.unchanged(plan), degraded, entryId: null },
        { reason: 'no-gain', wouldBeTokens: written.tokensAfter },
      );
    }
    // The row succeeded (degraded when the summary is extractive; an operator may retry it).
    return this.finish({
      status: 'succeeded',
      degraded,
      tokensBefore: plan.tokensBefore,
      tokensAfter: written.tokensAfter,
      firstKeptEntryId: plan.firstKeptEntryId ?? written.entryId,
      entryId: written.entryId,
    });
  }

  /** A rerun not applied: its summary stays on its row, with the context it would make. */
  private async keepOnRow(plan: Planned['plan'], summary: string, degraded: boolean) {
    const { tokensAfter } = await store.storeRerunSummary({ ...this.ref(), summary, keptTokens: plan.keptTokens });
    return this.finish({
      status: 'succeeded',
      degraded,
      tokensBefore: plan.tokensBefore,
      tokensAfter,
      firstKeptEntryId: plan.firstKeptEntryId,
      entryId: null,
    });
  }

  private writeRecord(planned: Planned, summary: string): Promise<WriteCompactionRecordResult> {
    const { plan, rangeOf } = planned;
    const { input, rerun } = this;
    return store.writeCompactionRecord({
      ...this.ref(),
      summary,
      firstKeptEntryId: plan.firstKeptEntryId,
      tokensBefore: plan.tokensBefore,
      keptTokens: plan.keptTokens,
      now: now(),
      ...(input.promptOverheadTokens !== undefined ? { promptOverheadTokens: input.promptOverheadTokens } : {}),
      ...(input.turnInProgress ? { turnInProgress: input.turnInProgress } : {}),
      ...(planned.windowOf !== undefined ? { windowOf: planned.windowOf } : {}),
      ...(rerun && rangeOf !== undefined ? { lineage: { rerunOf: rerun.compactionId, rangeOf } } : {}),
    });
  }

  /** Chunk summaries and their merge (or the one call on the prompt cache), then the identifier guard. */
  private async summarizeAndGuard(planned: Planned, onCache: boolean): Promise<string | undefined> {
    const cached = onCache ? await this.summarizeOnCache(planned) : undefined;
    const summary = cached ?? (await this.summarizeChunks(planned));
    return summary === undefined ? undefined : this.guard(planned, summary);
  }

  /** The whole range in one call on the last turn's cached prefix; undefined when that does not apply. */
  private async summarizeOnCache(planned: Planned): Promise<string | undefined> {
    const cached: { summary?: string } = await this.summarizer
      .summarizeOnCache({
        ...this.ref(),
        ...plannedRange(planned),
        instructions: chunkSummaryInstructions(this.instructionOptions()),
        ...previousOf(planned),
      })
      .catch((err: unknown) => {
        if (wf.isCancellation(err)) throw err;
        return {}; // the chunks still summarize
      });
    return cached.summary;
  }

  /** The planned chunks as parallel activities, merged, through the fallback chain; undefined when it all failed. */
  private async summarizeChunks(planned: Planned): Promise<string | undefined> {
    const options = this.instructionOptions();
    try {
      const merged = await summarizeWithFallback({
        ...this.chunkCalls(planned),
        ...previousOf(planned),
        chunkInstructions: chunkSummaryInstructions(options),
        mergeInstructions: mergeSummaryInstructions(options),
        isTerminal: wf.isCancellation,
      });
      return merged.summary;
    } catch (err) {
      if (!(err instanceof SummarizationFailedError)) throw err;
      wf.log.warn('every summarizer attempt failed; writing the extractive summary', {
        sessionKey: this.input.sessionKey,
        error: err.message,
      });
      this.extractiveBecause = err.message;
      return undefined;
    }
  }

  /** Each chunk as a claim check its activity reads by entry range; merges carry the partial summaries. */
  private chunkCalls({ plan }: Planned) {
    return chunkClaimChecks(plan, {
      chunk: (i, mode, prev, instructions) =>
        this.summarizer.summarizeChunk({
          ...this.ref(),
          firstEntryId: plan.chunks[i].firstEntryId,
          lastEntryId: plan.chunks[i].lastEntryId,
          mode,
          oversized: plan.oversized,
          instructions,
          ...(prev ? { previousSummary: prev } : {}),
        }),
      text: (text, prev, instructions) =>
        this.summarizer.summarizeText({
          ...this.ref(),
          text,
          instructions,
          ...(prev ? { previousSummary: prev } : {}),
        }),
    });
  }

  /**
   * Quality guard: identifiers, decisions and instructions verbatim, one summarizer retry with the
   * missing ones, then appended; capped. Undefined when the guarded summary is blank.
   */
  private async guard(planned: Planned, summary: string): Promise<string | undefined> {
    this.progress.step = 'guarding';
    const guardInput = this.guardInput(planned);
    let guarded = await store.guardSummary({ ...guardInput, summary });
    // `unkept` is absent from guard results recorded before it existed: those histories replay as they ran.
    const unkept = guarded.unkept ?? [];
    if (!guarded.blank && (guarded.missing.length > 0 || unkept.length > 0)) {
      const revised = await this.summarizer
        .reviseSummary({ ...this.ref(), summary, missing: guarded.missing, unkept, identifierPolicy: this.policy })
        .catch((err: unknown) => {
          if (wf.isCancellation(err)) throw err;
          return undefined; // the guard appends what is missing anyway
        });
      if (revised?.trim()) guarded = await store.guardSummary({ ...guardInput, summary: revised });
    }
    return guarded.blank ? undefined : guarded.summary;
  }

  /** What the guard and the extractive summary read: the planned range, the previous summary, the budget. */
  private guardInput(planned: Planned) {
    return {
      ...this.ref(),
      ...plannedRange(planned),
      ...previousOf(planned),
      identifierPolicy: this.policy,
      summarizedTokens: planned.plan.summarizedTokens,
    };
  }

  private instructionOptions() {
    return {
      identifierPolicy: this.policy,
      ...(this.input.instructions ? { customInstructions: this.input.instructions } : {}),
    };
  }

  /** A skipped compaction's figures: the context stays as it was. */
  private unchanged(plan: Planned['plan']) {
    return {
      status: 'skipped',
      tokensBefore: plan.tokensBefore,
      tokensAfter: plan.tokensBefore,
      firstKeptEntryId: plan.firstKeptEntryId,
    } as const;
  }

  /** Marks the row with the outcome and returns it as the workflow's result. */
  private async finish(outcome: CompactionOutcome, skip?: CompactionSkip): Promise<CompactionWorkflowResult> {
    await this.markFinished(outcome);
    return { compactionId: this.input.compactionId, ...outcome, ...(skip ? { skip } : {}) };
  }

  private markFinished(outcome: CompactionOutcome): Promise<void> {
    const because = outcome.degraded && this.extractiveBecause ? { extractiveBecause: this.extractiveBecause } : {};
    return store.finishCompaction({ ...this.ref(), trigger: this.input.trigger, ...outcome, ...because, now: now() });
  }

  /** The session and compaction every activity names (and the rerun's model, when it asks for one). */
  private ref() {
    return compactionRef(this.input);
  }
}

/** The session and compaction every activity names (and the rerun's model, when it asks for one). */
export function compactionRef(input: CompactionWorkflowInput) {
  const model = input.operation?.kind === 'rerun' ? input.operation.model : undefined;
  return {
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    sessionId: input.sessionId,
    compactionId: input.compactionId,
    ...(model ? { summarizerModel: model } : {}),
  };
}

/** Workflow time, ISO (deterministic in a workflow). */
export function now(): string {
  return new Date().toISOString();
}

function plannedRange({ plan }: Planned): PlannedRange {
  return { firstEntryId: plan.chunks[0].firstEntryId, lastEntryId: plan.chunks[plan.chunks.length - 1].lastEntryId };
}

function previousOf({ previousSummary }: Planned): { previousSummary?: string } {
  return previousSummary ? { previousSummary } : {};
}

/** A threshold, manual or background compaction follows the session's last call; an overflow's or an operator's edit does not. */
function followsLastTurn(input: CompactionWorkflowInput): boolean {
  return ['threshold', 'manual', 'soft', 'idle'].includes(input.trigger) && input.operation === undefined;
}

/** One summarizer-call budget per sequential step: the call on the prompt cache, the chunks (in parallel), the merge, the identifier revision. */
function summarizePhaseDeadlineMs(chunks: number, onCache: boolean): number {
  return ((chunks > 1 ? 3 : 2) + (onCache ? 1 : 0)) * DEFAULTS.summarizerCallBudgetMs;
}
