/**
 * Latency of a turn by step, in workflow time (deterministic, so safe in workflow code), handed to
 * the worker through a sink when the turn finishes: the worker logs the `turn` line and records the
 * turn histogram. Sinks add no commands to history and are not called on replay.
 */
import * as wf from '@temporalio/workflow';
import type { TokenUsage } from '../src/protocol';

export type TurnStep = 'begin' | 'model' | 'tools' | 'finish' | 'compaction';

/** What the worker's `keelTurn` sink receives: ids, counts and milliseconds only. */
export interface TurnTimingReport {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly turn: number;
  readonly totalMs: number;
  /** Milliseconds per step; model calls one by one, tool calls summed. */
  readonly steps: {
    readonly begin: number;
    readonly model: number[];
    readonly tools: number;
    readonly finish: number;
    readonly compaction: number;
  };
  readonly modelCalls: number;
  readonly usage: TokenUsage;
}

export interface KeelSinks extends wf.Sinks {
  keel: { turn(report: TurnTimingReport): void };
}

const sinks = wf.proxySinks<KeelSinks>();

/** Collects step durations for one turn: `step(name)` closes the previous step and opens the next. */
export class TurnTiming {
  private readonly startedAt = Date.now();
  private current: { step: TurnStep; since: number } | undefined;
  private readonly steps = { begin: 0, model: [] as number[], tools: 0, finish: 0, compaction: 0 };

  constructor(
    private readonly ids: { agentId: string; sessionKey: string },
    private readonly report: (report: TurnTimingReport) => void = (r) => sinks.keel.turn(r),
  ) {}

  /** Ends the running step (if any) and starts `step`. */
  step(step: TurnStep): void {
    this.close();
    this.current = { step, since: Date.now() };
  }

  /** Renames the running step: a step that turned out to be another (a startTurn that only began the turn). */
  relabel(step: TurnStep): void {
    if (this.current) this.current = { step, since: this.current.since };
  }

  /** Ends the last step and reports the turn to the worker. */
  finish(report: { sessionId: string; turn: number; modelCalls: number; usage: TokenUsage }): void {
    this.close();
    this.report({ ...this.ids, ...report, totalMs: Date.now() - this.startedAt, steps: this.steps });
  }

  private close(): void {
    if (!this.current) return;
    const ms = Date.now() - this.current.since;
    if (this.current.step === 'model') this.steps.model.push(ms);
    else this.steps[this.current.step] += ms;
    this.current = undefined;
  }
}
