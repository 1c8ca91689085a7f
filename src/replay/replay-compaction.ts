/**
 * A replayed compaction: the worker's compaction cycle (`runCompactionCycle`: plan, summary, write)
 * over a simulated window in memory, in place of activities over the database.
 */
import { summaryMessage, type SummaryRange } from '../context/active-context';
import type { AgentMessage, CompactionEntry } from '../context/types';
import { planCompaction } from '../compaction/plan-compaction';
import { keptTailTokens } from '../compaction/kept-tail';
import { collectFacts } from '../compaction/extractive-summary';
import { checkSummaryQuality } from '../compaction/quality-guard';
import { reclaimsTokens, runCompactionCycle, type CompactionCycleSteps } from '../compaction/compaction-cycle';
import type { CompactionPlan, PlanEntry } from '../compaction/types';
import { extractiveSummaryOf, type ReplaySummarizer, type SummarizeInput } from './replay-summarizer';

/** One compaction a policy ran. */
export interface ReplayCompaction {
  /** The turn it ran in (`mid-turn`, before a model call) or after (`threshold`). */
  readonly turn: number;
  readonly trigger: 'threshold' | 'mid-turn';
  /** `skipped`: nothing lay before the kept tail, or the summary would not have made the context smaller. */
  readonly status: 'succeeded' | 'skipped';
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly summaryChars: number;
  readonly summaryTokens: number;
  /** The model's summary failed and the extractive one was written instead. */
  readonly degraded: boolean;
  readonly summarizedMessages: number;
  readonly keptMessages: number;
  /** Protected identifiers of what it summarized (and of the summary before it). */
  readonly identifiers: number;
  /** Those the summary does not carry verbatim. */
  readonly missingIdentifiers: readonly string[];
}

/** What a replayed compaction needs besides the window: the policy's figures and summarizer. */
export interface ReplayCompactionPolicy {
  readonly contextWindow: number;
  readonly keepRecentTokens?: number;
  readonly summarize: ReplaySummarizer;
  readonly estimate: (message: AgentMessage) => number;
}

/** A replayed plan: the plan, the summary it extends, and the entries before the cut. */
interface ReplayPlanned {
  readonly plan: CompactionPlan;
  readonly summarizeInput: SummarizeInput;
}

/**
 * The session's window as a worker holds it between compactions: the active entries, the summary in
 * force, the last compaction (for the storm hold), and every compaction the replay ran.
 */
export class ReplayWindow {
  active: PlanEntry[] = [];
  summary: { entry: CompactionEntry; message: AgentMessage } | undefined;
  lastCompaction: { tokensBefore: number; tokensAfter: number } | null = null;
  compactionCount = 0;
  readonly compactions: ReplayCompaction[] = [];
  /** Identifiers of every message a compaction summarized, to count what the final summary kept. */
  readonly summarizedIds = new Set<string>();

  constructor(private readonly policy: ReplayCompactionPolicy) {}

  /** One compaction, by the worker's cycle. A replay simulates automatic compactions only. */
  async compact(turn: number, trigger: ReplayCompaction['trigger']): Promise<void> {
    await runCompactionCycle(this.steps(turn, trigger));
  }

  private steps(turn: number, trigger: ReplayCompaction['trigger']): CompactionCycleSteps<ReplayPlanned, void> {
    const record = (c: Omit<ReplayCompaction, 'turn' | 'trigger'>) =>
      void this.compactions.push({ turn, trigger, ...c });
    return {
      plan: async () => this.plan(),
      nothingToSummarize: async ({ plan, summarizeInput }) =>
        record(skipped(plan, summarizeInput.previousSummary?.length ?? 0, false, plan.keptEntryCount)),
      modelSummary: ({ summarizeInput }) => this.policy.summarize(summarizeInput),
      extractiveSummary: async ({ summarizeInput }) => extractiveSummaryOf(summarizeInput),
      write: async (planned, summary, degraded) => record(this.write(planned, summary, degraded)),
    };
  }

  private plan(): ReplayPlanned {
    const { contextWindow, estimate } = this.policy;
    const previousSummary = this.summary?.entry.summary;
    const plan = planCompaction(this.active, {
      contextWindow,
      keepRecentTokens: keptTailTokens(this.policy.keepRecentTokens, 'threshold', contextWindow),
      estimate,
      ...(previousSummary ? { previousSummary } : {}),
    });
    const summarized = this.active.slice(0, plan.summarizedEntryCount);
    return {
      plan,
      summarizeInput: { plan, summarized, contextWindow, ...(previousSummary ? { previousSummary } : {}) },
    };
  }

  /** The compaction entry in place of the summarized entries, unless it would not make the context smaller. */
  private write({ plan, summarizeInput }: ReplayPlanned, text: string, degraded: boolean) {
    const { summarized, previousSummary } = summarizeInput;
    const id = replayCompactionId(this.compactionCount + 1);
    const entry: CompactionEntry = {
      type: 'compaction',
      id,
      parentId: null,
      timestamp: new Date(0).toISOString(),
      summary: text,
      firstKeptEntryId: plan.firstKeptEntryId ?? id,
      tokensBefore: plan.tokensBefore,
    };
    const tokensAfter = this.policy.estimate(summaryMessage(entry)) + plan.keptTokens;
    if (!reclaimsTokens({ tokensBefore: plan.tokensBefore, tokensAfter })) {
      // Counts as one that reclaimed nothing for the storm hold, as the worker's row does.
      this.lastCompaction = { tokensBefore: plan.tokensBefore, tokensAfter: plan.tokensBefore };
      return skipped(plan, text.length, degraded, this.active.length);
    }
    const sourceIds = collectFacts(
      previousSummary,
      summarized.map((e) => e.message),
      'strict',
    ).identifiers;
    for (const sourceId of sourceIds) this.summarizedIds.add(sourceId);
    this.compactionCount++;
    const range: SummaryRange = {
      firstEntryId: summarized[0]!.id,
      lastEntryId: summarized[summarized.length - 1]!.id,
      messages: summarized.length,
    };
    this.summary = { entry, message: summaryMessage(entry, range) };
    this.active = this.active.slice(plan.summarizedEntryCount);
    this.lastCompaction = { tokensBefore: plan.tokensBefore, tokensAfter };
    return {
      status: 'succeeded' as const,
      tokensBefore: plan.tokensBefore,
      tokensAfter,
      summaryChars: text.length,
      summaryTokens: this.policy.estimate({ role: 'user', content: text }),
      degraded,
      summarizedMessages: summarized.length,
      keptMessages: plan.keptEntryCount,
      identifiers: sourceIds.length,
      missingIdentifiers: checkSummaryQuality(text, sourceIds).missing,
    };
  }
}

/** A compaction that wrote nothing: the context stays as it was. */
function skipped(
  plan: CompactionPlan,
  summaryChars: number,
  degraded: boolean,
  keptMessages: number,
): Omit<ReplayCompaction, 'turn' | 'trigger'> {
  return {
    status: 'skipped',
    tokensBefore: plan.tokensBefore,
    tokensAfter: plan.tokensBefore,
    summaryChars,
    summaryTokens: 0,
    degraded,
    summarizedMessages: 0,
    keptMessages,
    identifiers: 0,
    missingIdentifiers: [],
  };
}

/** A uuid-shaped id (as the worker's compaction ids), so the summary wrapper is estimated at its real size. */
function replayCompactionId(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}
