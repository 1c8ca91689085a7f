import { condition } from '@temporalio/workflow';
import type { CompactionWorkflowResult, SessionCarriedState, SessionStatus, SessionWorkflowInput } from '../src/protocol';
import type { FinishTurnResult } from '../activities/turn-activities';
import { DEFAULTS } from '../src/config/defaults';
import { pressureLevel } from '../src/context/context-window';

/**
 * The session workflow's state: the turn queue (admission order = Update arrival order) and the small
 * counters carried across continue-as-new.
 */
export class SessionState {
  turnsCompleted: number;
  turnsThisRun = 0;
  lastEntryId: string | null;
  contextTokens: number;
  contextWindow: number;
  compactionCount: number;
  lastCompactionId: string | null;
  private readonly runs: number;
  private readonly queue: number[] = [];
  private nextTicket = 0;

  constructor(private readonly input: SessionWorkflowInput) {
    this.turnsCompleted = input.carried?.turnsCompleted ?? 0;
    this.lastEntryId = input.carried?.lastEntryId ?? null;
    this.runs = (input.carried?.runs ?? 0) + 1;
    this.contextTokens = input.carried?.contextTokens ?? 0;
    this.contextWindow = input.contextWindowTokens ?? DEFAULTS.contextWindowTokens;
    this.compactionCount = input.carried?.compactionCount ?? 0;
    this.lastCompactionId = input.carried?.lastCompactionId ?? null;
  }

  /** After a turn: the counters the worker reported (its config owns the window). */
  recordTurn(lastEntryId: string, after: Pick<FinishTurnResult, 'contextTokens' | 'contextWindow' | 'compactionCount'>): void {
    this.lastEntryId = lastEntryId;
    this.contextTokens = after.contextTokens;
    this.contextWindow = after.contextWindow;
    this.compactionCount = after.compactionCount;
    this.turnsCompleted++;
    this.turnsThisRun++;
  }

  recordCompaction(result: CompactionWorkflowResult): void {
    if (!result.entryId) return;
    this.compactionCount++;
    this.lastCompactionId = result.compactionId;
    this.contextTokens = result.tokensAfter;
  }

  /** Runs `fn` after every turn admitted before it has finished. */
  async serialize<T>(fn: () => Promise<T>): Promise<T> {
    const ticket = this.nextTicket++;
    this.queue.push(ticket);
    try {
      await condition(() => this.queue[0] === ticket);
      return await fn();
    } finally {
      this.queue.splice(this.queue.indexOf(ticket), 1);
    }
  }

  idle(): boolean {
    return this.queue.length === 0;
  }

  /** A send written against an older entry, with nothing queued that could explain it, is stale. */
  isStale(expectedLastEntryId: string): boolean {
    return this.queue.length === 0 && this.lastEntryId !== null && expectedLastEntryId !== this.lastEntryId;
  }

  carried(): SessionCarriedState {
    return {
      turnsCompleted: this.turnsCompleted,
      lastEntryId: this.lastEntryId,
      runs: this.runs,
      contextTokens: this.contextTokens,
      compactionCount: this.compactionCount,
      lastCompactionId: this.lastCompactionId,
    };
  }

  status(): SessionStatus {
    const window = this.contextWindow;
    const percentUsed = window > 0 ? Math.round((this.contextTokens / window) * 1000) / 10 : 0;
    return {
      agentId: this.input.agentId,
      sessionKey: this.input.sessionKey,
      turnsCompleted: this.turnsCompleted,
      queuedTurns: this.queue.length,
      lastEntryId: this.lastEntryId,
      contextTokens: this.contextTokens,
      contextWindow: window,
      percentUsed,
      pressure: pressureLevel(this.contextTokens, window),
      compactionCount: this.compactionCount,
      lastCompactionId: this.lastCompactionId,
    };
  }
}
