import type {
  CompactionWorkflowResult,
  ContextSplit,
  MaintenanceJob,
  PromptCacheCounters,
  RequestOutcome,
  RunningTurn,
  SessionCarriedState,
  SessionRequest,
  SessionStatus,
  SessionWorkflowInput,
} from '../src/protocol';
import type { FinishTurnResult } from '../activities/parts/turn-finish';
import { DEFAULTS } from '../src/config/defaults';
import { pressureLevel } from '../src/context/context-window';
import { spawnAdvice } from '../src/context/spawn-policy';
import { cacheHitRatePercent, contextSplitTotal } from '../src/context/context-split';

/** The next thing the session runs: maintenance first (it was decided by the turn before), then requests in admission order. */
export type SessionJob =
  | { readonly kind: 'maintenance'; readonly job: MaintenanceJob }
  | { readonly kind: 'request'; readonly request: SessionRequest };

/**
 * The session workflow's state: the request queue (admission order = Signal arrival order), the
 * outcomes senders collect, and the small counters carried across continue-as-new.
 */
export class SessionState {
  turnsCompleted: number;
  turnsThisRun = 0;
  lastEntryId: string | null;
  contextTokens: number;
  contextWindow: number;
  configuredContextWindow: number | undefined;
  /** The model of the last turn (unknown before the first turn of this run). */
  model: string | undefined;
  compactionCount: number;
  lastCompactionId: string | null;
  /** The session's prompt tokens by cache use, as the last turn's finish counted them. */
  promptCache: PromptCacheCounters | undefined;
  /** What the last model call's context was made of (status). */
  contextSplit: ContextSplit | undefined;
  /** Threshold compaction paused or held, as the last turn's finish decided (status). */
  autoCompaction: SessionStatus['autoCompaction'];
  /** True once the run has decided to end: waiting senders are told to ask the next run. */
  draining = false;
  /** The turn running now (status). */
  private runningTurn: RunningTurn | undefined;
  /** The last cancelled turn, until the next turn's begin marks it. */
  private cancelledTurn: SessionCarriedState['cancelledTurn'];
  private runs: number;
  private readonly queue: SessionRequest[];
  private readonly maintenance: MaintenanceJob[];
  private readonly outcomes: Map<string, RequestOutcome>;
  private readonly recentIds: string[];
  private readonly known: Set<string>;
  /** Admitted and not yet settled (queued or running). */
  private readonly pending: Set<string>;
  /** Outcomes their sender already has: kept for a repeated ask, not carried to the next run. */
  private readonly collectedIds = new Set<string>();
  /** A job is running (a turn, a compaction, a flush): status counts it as queued work. */
  private busy = false;

  constructor(input: SessionWorkflowInput) {
    const c = input.carried;
    this.turnsCompleted = c?.turnsCompleted ?? 0;
    this.lastEntryId = c?.lastEntryId ?? null;
    this.runs = (c?.runs ?? 0) + 1;
    this.contextTokens = c?.contextTokens ?? 0;
    this.contextWindow = input.contextWindowTokens ?? DEFAULTS.contextWindowTokens;
    this.compactionCount = c?.compactionCount ?? 0;
    this.lastCompactionId = c?.lastCompactionId ?? null;
    this.promptCache = c?.promptCache;
    this.contextSplit = c?.contextSplit;
    this.cancelledTurn = c?.cancelledTurn;
    this.queue = [...(c?.queued ?? [])];
    this.maintenance = [...(c?.pendingMaintenance ?? [])];
    this.outcomes = new Map(c?.outcomes ?? []);
    this.recentIds = [...(c?.recentRequestIds ?? [])];
    this.known = new Set([...this.recentIds, ...this.queue.map((r) => r.requestId)]);
    this.pending = new Set(this.queue.map((r) => r.requestId));
    // A turn handed on mid-wait is still its sender's: its outcome comes from this run.
    const resumed = c?.suspendedTurn?.request.requestId;
    if (resumed !== undefined) {
      this.known.add(resumed);
      this.pending.add(resumed);
    }
  }

  /** Counters saved when the workflow closed idle (the next message started a fresh run). */
  restore(saved: Partial<SessionCarriedState>): void {
    this.turnsCompleted = saved.turnsCompleted ?? this.turnsCompleted;
    this.lastEntryId = saved.lastEntryId ?? this.lastEntryId;
    this.runs = (saved.runs ?? 0) + 1;
    this.contextTokens = saved.contextTokens ?? this.contextTokens;
    this.compactionCount = saved.compactionCount ?? this.compactionCount;
    this.lastCompactionId = saved.lastCompactionId ?? this.lastCompactionId;
    this.promptCache = saved.promptCache ?? this.promptCache;
    this.contextSplit = saved.contextSplit ?? this.contextSplit;
    this.cancelledTurn = saved.cancelledTurn ?? this.cancelledTurn;
  }

  /** Admits a request once: a resent request id (a client retry) is not queued again. */
  admit(request: SessionRequest): void {
    if (this.known.has(request.requestId)) return;
    this.known.add(request.requestId);
    this.recentIds.push(request.requestId);
    if (this.recentIds.length > DEFAULTS.rememberedRequestIds) this.known.delete(this.recentIds.shift()!);
    this.pending.add(request.requestId);
    this.queue.push(request);
  }

  /** Takes a queued request out of the queue; false when it is not queued (running, settled or unknown). */
  withdraw(requestId: string): boolean {
    const at = this.queue.findIndex((r) => r.requestId === requestId);
    if (at < 0) return false;
    this.queue.splice(at, 1);
    return true;
  }

  /** Maintenance decided after a turn runs before the next queued request. */
  schedule(job: MaintenanceJob): void {
    if (!this.maintenance.some((m) => m.kind === job.kind)) this.maintenance.push(job);
  }

  /** Requests wait (maintenance aside). */
  hasQueuedRequests(): boolean {
    return this.queue.length > 0;
  }

  hasWork(): boolean {
    return this.maintenance.length > 0 || this.queue.length > 0;
  }

  next(): SessionJob | undefined {
    const job = this.maintenance.shift();
    const request = job ? undefined : this.queue.shift();
    this.busy = Boolean(job ?? request);
    if (job) return { kind: 'maintenance', job };
    return request ? { kind: 'request', request } : undefined;
  }

  jobDone(): void {
    this.busy = false;
  }

  /** Answers every queued request with `outcome` without running it (an ended subagent takes no more work). */
  refuseQueued(outcome: RequestOutcome): void {
    for (const request of this.queue.splice(0)) this.settle(request.requestId, outcome);
  }

  /** Stores a request's outcome for its sender; the oldest uncollected outcomes are dropped past the bound. */
  settle(requestId: string, outcome: RequestOutcome): void {
    this.pending.delete(requestId);
    this.outcomes.set(requestId, outcome);
    for (const id of this.outcomes.keys()) {
      if (this.outcomes.size <= DEFAULTS.keptOutcomes) break;
      if (this.collectedIds.delete(id)) this.outcomes.delete(id);
    }
    // Still over the bound with nothing collected: the oldest uncollected outcome goes (its sender is long gone).
    while (this.outcomes.size > DEFAULTS.keptOutcomes) this.outcomes.delete(this.outcomes.keys().next().value!);
  }

  /** The outcome once there is one; `retry` while draining; `unknown` for an id this session does not hold. */
  outcome(requestId: string): RequestOutcome | undefined {
    const done = this.outcomes.get(requestId);
    if (done) return done;
    if (this.draining) return { status: 'retry' };
    if (this.pending.has(requestId)) return undefined;
    return { status: 'unknown' };
  }

  /** Some settled outcome has not reached its sender yet. */
  hasUncollected(): boolean {
    return this.uncollectedIds().length > 0;
  }

  /** Settled outcomes nobody has collected, oldest first. */
  uncollectedIds(): string[] {
    return [...this.outcomes.keys()].filter((id) => !this.collectedIds.has(id));
  }

  /** The sender has its outcome: it is not handed on to the next run. */
  collected(requestId: string): void {
    if (this.outcomes.has(requestId)) this.collectedIds.add(requestId);
  }

  /** After a turn: the counters the worker reported (its config and learned limits own the window). */
  recordTurn(
    lastEntryId: string,
    after: Pick<
      FinishTurnResult,
      'contextTokens' | 'contextWindow' | 'configuredContextWindow' | 'compactionCount' | 'model'
    > &
      Partial<Pick<FinishTurnResult, 'promptCache' | 'autoCompactionPaused' | 'compactionHeldUntilTokens'>>,
    split?: ContextSplit,
  ): void {
    this.lastEntryId = lastEntryId;
    if (split) this.contextSplit = split;
    // Histories recorded before the model was reported carry none.
    this.model = after.model as string | undefined;
    this.contextTokens = after.contextTokens;
    this.contextWindow = after.contextWindow;
    this.configuredContextWindow = after.configuredContextWindow;
    this.compactionCount = after.compactionCount;
    if (after.promptCache) this.promptCache = after.promptCache;
    this.autoCompaction = after.autoCompactionPaused
      ? { state: 'paused' }
      : after.compactionHeldUntilTokens !== undefined
        ? { state: 'held', untilTokens: after.compactionHeldUntilTokens }
        : undefined;
    this.turnsCompleted++;
    this.turnsThisRun++;
  }

  /** The running turn's progress, for status; cleared when its request settles. */
  turnRunning(turn: { running(): RunningTurn } | undefined): void {
    this.runningTurn = turn?.running();
  }

  recordCompaction(result: CompactionWorkflowResult): void {
    if (!result.entryId) return;
    this.compactionCount++;
    this.lastCompactionId = result.compactionId;
    // A success resets the failure count (a manual one resumes a paused session); the next turn decides anew.
    this.autoCompaction = undefined;
    // The compacted conversation replaces the history; the prompt and tools stay what they were and
    // still count, so the headline is the sum of the split (`tokensAfter` is the conversation alone).
    if (this.contextSplit) {
      this.contextSplit = { ...this.contextSplit, historyTokens: result.tokensAfter };
      this.contextTokens = contextSplitTotal(this.contextSplit);
    } else {
      this.contextTokens = result.tokensAfter;
    }
  }

  /** What the last call sent besides the conversation (system prompt, workspace files, tools): a compaction keeps it. */
  promptOverheadTokens(): number | undefined {
    return this.contextSplit ? contextSplitTotal(this.contextSplit) - this.contextSplit.historyTokens : undefined;
  }

  /** A send written against an older entry, with nothing queued before it that could explain it, is stale. */
  isStale(expectedLastEntryId: string): boolean {
    return this.lastEntryId !== null && expectedLastEntryId !== this.lastEntryId;
  }

  /** Bytes of what continue-as-new would carry, so a run never hands on more than one payload holds. */
  carriedBytes(): number {
    return JSON.stringify(this.carried()).length;
  }

  carried(): SessionCarriedState {
    return {
      turnsCompleted: this.turnsCompleted,
      lastEntryId: this.lastEntryId,
      runs: this.runs,
      contextTokens: this.contextTokens,
      compactionCount: this.compactionCount,
      lastCompactionId: this.lastCompactionId,
      ...(this.promptCache ? { promptCache: this.promptCache } : {}),
      queued: [...this.queue],
      pendingMaintenance: [...this.maintenance],
      outcomes: this.carriedOutcomes(),
      recentRequestIds: [...this.recentIds],
      ...(this.contextSplit ? { contextSplit: this.contextSplit } : {}),
      ...(this.cancelledTurn ? { cancelledTurn: this.cancelledTurn } : {}),
    };
  }

  /**
   * A turn its sender cancelled (named by its first entry): the next turn's begin marks its
   * entries, so none reaches a model again. The marker's id comes from the turn's, so no retry or
   * replay writes two.
   */
  turnCancelled(turn: { readonly userEntryId: string } | undefined): void {
    if (turn) this.cancelledTurn = { ...turn, markerId: `${turn.userEntryId}/cancelled` };
  }

  /** The cancelled turn the next turn's begin marks, taken once. */
  takeCancelledTurn(): SessionCarriedState['cancelledTurn'] {
    const taken = this.cancelledTurn;
    this.cancelledTurn = undefined;
    return taken;
  }

  /** The newest uncollected outcomes within the byte budget (older ones' senders ask, get `unknown`, and are told). */
  private carriedOutcomes(): Array<[string, RequestOutcome]> {
    const kept: Array<[string, RequestOutcome]> = [];
    let bytes = 0;
    for (const entry of [...this.outcomes.entries()].reverse()) {
      if (this.collectedIds.has(entry[0])) continue;
      bytes += JSON.stringify(entry).length;
      if (bytes > DEFAULTS.carriedOutcomeBytes) break;
      kept.unshift(entry);
    }
    return kept;
  }

  status(input: SessionWorkflowInput): SessionStatus {
    const window = this.contextWindow;
    const percentUsed = window > 0 ? Math.round((this.contextTokens / window) * 1000) / 10 : 0;
    return {
      agentId: input.agentId,
      sessionKey: input.sessionKey,
      turnsCompleted: this.turnsCompleted,
      queuedTurns: this.queue.length + this.maintenance.length + (this.busy ? 1 : 0),
      lastEntryId: this.lastEntryId,
      contextTokens: this.contextTokens,
      contextWindow: window,
      percentUsed,
      pressure: pressureLevel(this.contextTokens, window),
      compactionCount: this.compactionCount,
      lastCompactionId: this.lastCompactionId,
      ...(this.configuredContextWindow !== undefined && this.configuredContextWindow !== window
        ? { configuredContextWindow: this.configuredContextWindow }
        : {}),
      ...(this.promptCache
        ? { promptCache: { ...this.promptCache, hitRatePercent: cacheHitRatePercent(this.promptCache) } }
        : {}),
      ...(this.model !== undefined ? { model: this.model } : {}),
      ...(this.contextSplit ? { contextSplit: this.contextSplit } : {}),
      spawnAdvice: spawnAdvice(percentUsed),
      ...(this.autoCompaction ? { autoCompaction: this.autoCompaction } : {}),
      uncollectedRequestIds: this.uncollectedIds(),
      ...(this.runningTurn ? { runningTurn: this.runningTurn } : {}),
    };
  }
}
