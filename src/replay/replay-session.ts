/**
 * Plays a recorded conversation through Keel's own context path under one policy, in process:
 * the pipeline and the context engine before every model call (mid-turn precheck included), the
 * after-turn decision, the storm hold, and compactions by the worker's own cycle (replay-compaction.ts). Nothing is
 * read or written besides the transcript given; the numbers are the ones a worker would compute.
 */
import { DEFAULTS } from '../config/defaults';
import { reserveForWindow } from '../context/context-window';
import { TokenCache } from '../context/estimate-tokens';
import { runContextPipeline } from '../context/pipeline';
import { resolveHistoryLimit } from '../context/limit-history-turns';
import { truncateOversizedToolResults } from '../context/truncate-tool-results';
import type { AgentMessage } from '../context/types';
import { resolveContextEngine } from '../engine/registry';
import type { ContextEngine } from '../engine/types';
import type { PlanEntry } from '../compaction/types';
import { boundedEstimate } from '../runtime/bounded-estimate';
import { compactionHoldLimit, decideAfterTurn } from '../turn/turn-decisions';
import type { ReplayPolicy } from './replay-policy';
import type { ReplayEntry, ReplayTranscript } from './replay-source';
import { extractiveSummarizer, type ReplaySummarizer } from './replay-summarizer';
import { ReplayWindow, type ReplayCompaction } from './replay-compaction';

export type { ReplayCompaction } from './replay-compaction';

/** One replayed turn under one policy. */
export interface ReplayTurn {
  readonly turn: number;
  readonly modelCalls: number;
  /** Context after the turn (the last call's context plus its reply): what the after-turn decision reads. */
  readonly contextTokens: number;
  /** Tokens sent to the model in the turn: every call's context (system prompt and tools included). */
  readonly tokensSent: number;
  /** contextTokens / window. */
  readonly pressure: number;
  /** Tool results the context engine cleared in the turn's last call, and their characters. */
  readonly prunedResults: number;
  readonly prunedChars: number;
  /** Tool results cut to their share of the budget in the turn's last call. */
  readonly truncatedResults: number;
  /** A compaction ran before one of the turn's model calls (precheck) / after the turn. */
  readonly compactedMidTurn: boolean;
  readonly compactedAfter: boolean;
  /** The soft threshold's memory flush would run after this turn (no compaction). */
  readonly memoryFlush: boolean;
  /** Threshold compaction waited (storm hold) until the context reaches this many tokens. */
  readonly heldUntilTokens?: number;
  /** Characters of the summary in force at the end of the turn (0 before the first compaction). */
  readonly summaryChars: number;
}

/** What one policy did to the whole conversation. */
export interface PolicyReplay {
  readonly policy: ReplayPolicy;
  readonly turns: readonly ReplayTurn[];
  readonly compactions: readonly ReplayCompaction[];
  readonly totals: {
    readonly turns: number;
    readonly modelCalls: number;
    /** Every call's context summed: what the conversation cost in prompt tokens. */
    readonly tokensSent: number;
    readonly peakContextTokens: number;
    readonly peakPressure: number;
    readonly compactions: number;
    readonly skippedCompactions: number;
    readonly prunedTurns: number;
    readonly memoryFlushes: number;
    readonly finalSummaryChars: number;
  };
  /** Identifiers that went into summaries: which the last summary still carries, which were lost. */
  readonly identifiers: {
    readonly summarized: number;
    readonly kept: readonly string[];
    readonly lost: readonly string[];
  };
}

export interface ReplayOptions {
  /** Called after each turn (progress bars). */
  readonly onTurn?: (done: number, total: number) => void;
  /** The configured summarizer model, for policies with `"summarizer": "model"`. */
  readonly modelSummarizer?: ReplaySummarizer;
}

/** A policy asks for model summaries and no summarizer model is configured. */
export class NoSummarizerModelError extends Error {
  override readonly name = 'NoSummarizerModelError';
  constructor(policy: string) {
    super(
      `policy ${policy} asks for model summaries ("summarizer": "model") but no model is configured: set ANTHROPIC_API_KEY (or the agent's model / compactionModel in keel.config.json), or drop the key for extractive summaries`,
    );
  }
}

/** Turns of a transcript: each starts at a user message (custom messages ride along as context). */
export function splitTurns(entries: readonly ReplayEntry[]): ReplayEntry[][] {
  const turns: ReplayEntry[][] = [];
  let current: ReplayEntry[] = [];
  for (const entry of entries) {
    if (
      entry.message.role === 'user' &&
      !entry.context &&
      current.some((e) => e.message.role === 'user' && !e.context)
    ) {
      turns.push(current);
      current = [];
    }
    current.push(entry);
  }
  if (current.length > 0) turns.push(current);
  return turns;
}

/** Replays `transcript` under `policy`; see the module comment. */
export async function replaySession(
  transcript: ReplayTranscript,
  policy: ReplayPolicy,
  options: ReplayOptions = {},
): Promise<PolicyReplay> {
  const summarize = policy.summarizer === 'model' ? options.modelSummarizer : extractiveSummarizer;
  if (!summarize) throw new NoSummarizerModelError(policy.name);
  const sim = new PolicySimulation(policy, transcript.sessionKey ?? '', summarize);
  const turns = splitTurns(transcript.entries);
  for (const [i, entries] of turns.entries()) {
    await sim.turn(i + 1, entries);
    options.onTurn?.(i + 1, turns.length);
  }
  return sim.result();
}

interface Call {
  readonly estimatedTokens: number;
  readonly budget: number;
  readonly contextTokens: number;
  readonly cleared: readonly { chars: number }[];
  readonly truncated: number;
}

/** One policy's session state as the worker would hold it: active window, last compaction, counters. */
class PolicySimulation {
  private readonly engine: ContextEngine;
  private readonly cache = new TokenCache();
  private readonly reserve: number;
  private readonly historyLimit: number | undefined;
  private readonly window: ReplayWindow;
  private memoryFlushCompactionCount: number | null = null;
  private readonly turns: ReplayTurn[] = [];

  constructor(
    private readonly policy: ReplayPolicy,
    sessionKey: string,
    summarize: ReplaySummarizer,
  ) {
    this.window = new ReplayWindow({
      contextWindow: policy.contextWindow,
      keepRecentTokens: policy.keepRecentTokens,
      summarize,
      estimate: storedEstimate,
    });
    this.engine = resolveContextEngine({
      plugins: { slots: { contextEngine: policy.contextEngine } },
      ...(policy.contextEngineOptions ? { contextEngine: policy.contextEngineOptions } : {}),
    });
    this.reserve = reserveForWindow(policy.contextWindow, policy);
    this.historyLimit = sessionKey ? safeHistoryLimit(sessionKey, policy.historyLimits) : undefined;
  }

  private readonly estimate = storedEstimate;

  async turn(turn: number, entries: readonly ReplayEntry[]): Promise<void> {
    let compactedMidTurn = false;
    let sent = 0;
    let calls = 0;
    let last: Call | undefined;
    let contextTokens: number | undefined;
    for (const entry of entries) {
      if (entry.message.role !== 'assistant') {
        this.append(entry);
        continue;
      }
      // A model call: prepared from the active window, compacted first when the precheck says so.
      let call = await this.prepare();
      if (!compactedMidTurn && call.estimatedTokens > call.budget) {
        const hold = compactionHoldLimit(this.holdInput(), this.reserve);
        if (hold === undefined || call.contextTokens >= hold) {
          compactedMidTurn = true;
          await this.compact(turn, 'mid-turn');
          call = await this.prepare();
        }
      }
      calls++;
      sent += call.contextTokens;
      last = call;
      this.append(entry);
      contextTokens = call.contextTokens + this.estimate(entry.message);
    }
    if (contextTokens === undefined) {
      // No reply was recorded (the turn failed or the file ends with a question): no decision either.
      this.record({
        turn,
        modelCalls: 0,
        contextTokens: this.turns.at(-1)?.contextTokens ?? 0,
        tokensSent: 0,
        compactedMidTurn,
        compactedAfter: false,
        memoryFlush: false,
      });
      return;
    }
    const decision = decideAfterTurn({
      ...this.holdInput(),
      contextTokens,
      reserveTokens: this.policy.reserveTokens,
      reserveTokensFloor: this.policy.reserveTokensFloor,
      softThresholdTokens: this.policy.softThresholdTokens,
      // The replay compacts where the session would wait for it: at the threshold, not beside it.
      backgroundCompactionShare: 0,
      compactionCount: this.window.compactionCount,
      memoryFlushCompactionCount: this.memoryFlushCompactionCount,
      compactionFailures: 0,
    });
    const flush = decision.memoryFlush && !decision.compact;
    if (decision.memoryFlush) this.memoryFlushCompactionCount = this.window.compactionCount;
    this.record({
      turn,
      modelCalls: calls,
      contextTokens,
      tokensSent: sent,
      compactedMidTurn,
      compactedAfter: decision.compact,
      memoryFlush: flush,
      prunedResults: last?.cleared.length ?? 0,
      prunedChars: last?.cleared.reduce((n, c) => n + c.chars, 0) ?? 0,
      truncatedResults: last?.truncated ?? 0,
      ...(decision.compactionHeldUntilTokens !== undefined
        ? { heldUntilTokens: decision.compactionHeldUntilTokens }
        : {}),
    });
    if (decision.compact) await this.compact(turn, 'threshold');
  }

  private record(
    t: Omit<ReplayTurn, 'pressure' | 'summaryChars' | 'prunedResults' | 'prunedChars' | 'truncatedResults'> &
      Partial<Pick<ReplayTurn, 'prunedResults' | 'prunedChars' | 'truncatedResults'>>,
  ): void {
    this.turns.push({
      prunedResults: 0,
      prunedChars: 0,
      truncatedResults: 0,
      ...t,
      pressure: t.contextTokens / this.policy.contextWindow,
      summaryChars: this.window.summary?.entry.summary.length ?? 0,
    });
  }

  private append(entry: PlanEntry): void {
    // Stored entries carry their estimate: seeded once, as prepareContext seeds its cache from the rows.
    this.cache.getOrCompute(undefined, entry.message, () => this.estimate(entry.message));
    this.window.active.push(entry);
  }

  private holdInput() {
    return {
      lastCompaction: this.window.lastCompaction,
      minReclaimShare: this.policy.compactionMinReclaimShare,
      contextWindow: this.policy.contextWindow,
    };
  }

  /** prepareContext: summary + active messages → pipeline → truncation → engine.assemble(budget). */
  private async prepare(): Promise<Call> {
    const raw = this.window.summary
      ? [this.window.summary.message, ...this.window.active.map((e) => e.message)]
      : this.window.active.map((e) => e.message);
    const { messages } = runContextPipeline(raw, {
      provider: this.policy.modelProvider,
      ...(this.historyLimit ? { historyLimit: this.historyLimit } : {}),
    });
    const overhead = this.policy.overheadTokens;
    const budget = Math.max(0, this.policy.contextWindow - this.reserve - overhead);
    const maxToolChars = Math.floor(budget * DEFAULTS.toolResultMaxBudgetShare * DEFAULTS.charsPerToken);
    const { messages: fitted, truncated } = truncateOversizedToolResults(messages, maxToolChars);
    const assembled = await this.engine.assemble({
      sessionId: 'replay',
      messages: fitted,
      tokenBudget: budget,
      tokenCache: this.cache,
    });
    return {
      estimatedTokens: assembled.estimatedTokens,
      budget,
      contextTokens: assembled.estimatedTokens + overhead,
      cleared: assembled.report?.cleared ?? [],
      truncated: truncated.length,
    };
  }

  /** A compaction on the simulated window, by the worker's cycle; the compaction's flush ran first: this cycle is flushed. */
  private async compact(turn: number, trigger: ReplayCompaction['trigger']): Promise<void> {
    this.memoryFlushCompactionCount = this.window.compactionCount;
    await this.window.compact(turn, trigger);
  }

  result(): PolicyReplay {
    const turns = this.turns;
    const finalSummary = this.window.summary?.entry.summary ?? '';
    const kept = [...this.window.summarizedIds].filter((id) => finalSummary.includes(id));
    return {
      policy: this.policy,
      turns,
      compactions: this.window.compactions,
      totals: {
        turns: turns.length,
        modelCalls: sum(turns.map((t) => t.modelCalls)),
        tokensSent: sum(turns.map((t) => t.tokensSent)),
        peakContextTokens: Math.max(0, ...turns.map((t) => t.contextTokens)),
        peakPressure: Math.max(0, ...turns.map((t) => t.pressure)),
        compactions: this.window.compactions.filter((c) => c.status === 'succeeded').length,
        skippedCompactions: this.window.compactions.filter((c) => c.status === 'skipped').length,
        prunedTurns: turns.filter((t) => t.prunedResults > 0).length,
        memoryFlushes: turns.filter((t) => t.memoryFlush).length,
        finalSummaryChars: finalSummary.length,
      },
      identifiers: {
        summarized: this.window.summarizedIds.size,
        kept,
        lost: [...this.window.summarizedIds].filter((id) => !finalSummary.includes(id)),
      },
    };
  }
}

/** Estimates by message, shared by every policy replaying the same transcript (tokenizing is most of the work). */
const estimates = new WeakMap<AgentMessage, number>();

/** The stored per-entry estimate (bounded: huge results are counted from their length), once per message. */
function storedEstimate(message: AgentMessage): number {
  let tokens = estimates.get(message);
  if (tokens === undefined) {
    tokens = boundedEstimate(message);
    estimates.set(message, tokens);
  }
  return tokens;
}

/** The history limit of a session key; a key Keel cannot parse (an imported transcript's) has none. */
function safeHistoryLimit(sessionKey: string, limits: ReplayPolicy['historyLimits']): number | undefined {
  try {
    return resolveHistoryLimit(sessionKey, limits);
  } catch {
    return undefined;
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
