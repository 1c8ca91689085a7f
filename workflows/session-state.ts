import { condition } from '@temporalio/workflow';
import type { SessionCarriedState, SessionStatus, SessionWorkflowInput } from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';

/**
 * The session workflow's state: the turn queue (admission order = Update arrival order) and the small
 * counters carried across continue-as-new.
 */
export class SessionState {
  turnsCompleted: number;
  turnsThisRun = 0;
  lastEntryId: string | null;
  contextTokens = 0;
  compactionCount = 0;
  lastCompactionId: string | null = null;
  private readonly runs: number;
  private readonly queue: number[] = [];
  private nextTicket = 0;

  constructor(private readonly input: SessionWorkflowInput) {
    this.turnsCompleted = input.carried?.turnsCompleted ?? 0;
    this.lastEntryId = input.carried?.lastEntryId ?? null;
    this.runs = (input.carried?.runs ?? 0) + 1;
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
    return { turnsCompleted: this.turnsCompleted, lastEntryId: this.lastEntryId, runs: this.runs };
  }

  status(): SessionStatus {
    const window = this.input.contextWindowTokens ?? DEFAULTS.contextWindowTokens;
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
      pressure: percentUsed >= 85 ? '85' : percentUsed >= 70 ? '70' : percentUsed >= 50 ? '50' : 'normal',
      compactionCount: this.compactionCount,
      lastCompactionId: this.lastCompactionId,
    };
  }
}
