/**
 * Keel's own Prometheus series. Recorded by activities and the worker's sinks (the worker process),
 * never in workflow code. Labels stay bounded: agent, kind, trigger, outcome — never a session key.
 */
import type { TokenUsage } from '../protocol';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The `kind` label of the token counter (Prometheus label values, kept stable for dashboards). */
type TokenKind = 'input' | 'output' | 'cache_read' | 'cache_write';

export class KeelMetrics {
  readonly registry = new Registry();

  constructor() {
    // The process's own series (resident memory, heap used, event-loop lag, GC): what sizing a
    // fleet on one worker needs beside Keel's.
    collectDefaultMetrics({ register: this.registry });
  }
  private readonly turnDuration = new Histogram({
    name: 'keel_turn_duration_seconds',
    help: 'Wall time of a turn, begin to finish (workflow time)',
    labelNames: ['agent'],
    buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160],
    registers: [this.registry],
  });
  private readonly modelCallDuration = new Histogram({
    name: 'keel_model_call_duration_seconds',
    help: 'One model call, request to last streamed event',
    labelNames: ['agent', 'outcome'],
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80],
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: 'keel_tokens_total',
    help: 'Tokens the provider reported, by kind (input is uncached prompt tokens)',
    labelNames: ['agent', 'kind'],
    registers: [this.registry],
  });
  private readonly estimatedTokens = new Counter({
    name: 'keel_tokens_estimated_total',
    help: 'Of keel_tokens_total, tokens Keel counted itself because the model server reported no usage, by kind',
    labelNames: ['agent', 'kind'],
    registers: [this.registry],
  });
  private readonly cacheHitRatio = new Gauge({
    name: 'keel_prompt_cache_hit_ratio',
    help: 'Share of prompt tokens read from the provider cache, over the worker lifetime',
    labelNames: ['agent'],
    registers: [this.registry],
  });
  private readonly compactions = new Counter({
    name: 'keel_compactions_total',
    help: 'Compactions finished, by trigger and outcome',
    labelNames: ['trigger', 'outcome'],
    registers: [this.registry],
  });
  private readonly compactionsStarted = new Counter({
    name: 'keel_compactions_started_total',
    help: 'Compactions started, by trigger (minus keel_compactions_total: those running now, in the background too)',
    labelNames: ['trigger'],
    registers: [this.registry],
  });
  private readonly compactionTokens = new Counter({
    name: 'keel_compaction_tokens_total',
    help: 'Tokens the summarizer was billed for finished compactions, by trigger and kind',
    labelNames: ['trigger', 'kind'],
    registers: [this.registry],
  });
  private readonly memoryFlushes = new Counter({
    name: 'keel_memory_flush_total',
    help: 'Memory flushes, by outcome (ran, skipped, failed)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly contextPressure = new Gauge({
    name: 'keel_context_pressure_ratio',
    help: "Context tokens over the window after the agent's latest turn",
    labelNames: ['agent'],
    registers: [this.registry],
  });
  private readonly contextRepairs = new Counter({
    name: 'keel_context_repairs_total',
    help: 'What the context pipeline changed before model calls, by kind',
    labelNames: ['agent', 'kind'],
    registers: [this.registry],
  });
  private readonly approvals = new Counter({
    name: 'keel_tool_approvals_total',
    help: 'Tool calls decided after waiting for a person, by outcome (approved, denied, timed_out)',
    labelNames: ['agent', 'outcome'],
    registers: [this.registry],
  });
  private readonly engineFailures = new Counter({
    name: 'keel_context_engine_failures_total',
    help: 'Context-engine lifecycle calls that threw, by engine, method and whether legacy answered instead',
    labelNames: ['engine', 'method', 'fallback'],
    registers: [this.registry],
  });
  /** Prompt tokens per agent (read from cache, all), for the hit ratio. */
  private readonly prompt = new Map<string, { read: number; all: number }>();

  turn(agent: string, seconds: number): void {
    this.turnDuration.observe({ agent }, seconds);
  }

  modelCall(agent: string, seconds: number, outcome: 'ok' | 'error'): void {
    this.modelCallDuration.observe({ agent, outcome }, seconds);
  }

  /** Counts a model call's tokens by kind (the `kind` label; Keel's own counts also apart) and keeps the agent's prompt-cache hit ratio. */
  usage(agent: string, usage: TokenUsage): void {
    const byKind: Record<TokenKind, number> = {
      input: usage.inputTokens,
      output: usage.outputTokens,
      cache_read: usage.cacheReadTokens,
      cache_write: usage.cacheWriteTokens,
    };
    for (const [kind, n] of Object.entries(byKind)) {
      if (n <= 0) continue;
      this.tokens.inc({ agent, kind }, n);
      if (usage.estimated) this.estimatedTokens.inc({ agent, kind }, n);
    }
    const p = this.prompt.get(agent) ?? { read: 0, all: 0 };
    p.read += usage.cacheReadTokens;
    p.all += usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
    this.prompt.set(agent, p);
    if (p.all > 0) this.cacheHitRatio.set({ agent }, p.read / p.all);
  }

  /** Counts a context-engine call that threw (`fallback`: the legacy engine answered in its place). */
  engineFailure(engine: string, method: string, fallback: boolean): void {
    this.engineFailures.inc({ engine, method, fallback: String(fallback) });
  }

  compaction(trigger: string, outcome: string): void {
    this.compactions.inc({ trigger, outcome });
  }

  /** A compaction was recorded as running (once per compaction, whichever worker runs it). */
  compactionStarted(trigger: string): void {
    this.compactionsStarted.inc({ trigger });
  }

  /** What a finished compaction's summarizer calls were billed, by kind. */
  compactionBilled(trigger: string, billed: Readonly<Record<TokenKind, number>>): void {
    for (const [kind, n] of Object.entries(billed)) if (n > 0) this.compactionTokens.inc({ trigger, kind }, n);
  }

  memoryFlush(outcome: 'ran' | 'skipped' | 'failed'): void {
    this.memoryFlushes.inc({ outcome });
  }

  pressure(agent: string, ratio: number): void {
    this.contextPressure.set({ agent }, ratio);
  }

  /** Counts one tool call's approval decision (once, when its row takes it). */
  approval(agent: string, outcome: 'approved' | 'denied' | 'timed_out'): void {
    this.approvals.inc({ agent, outcome });
  }

  repairs(agent: string, counts: Readonly<Record<string, number>>): void {
    for (const [kind, n] of Object.entries(counts)) if (n > 0) this.contextRepairs.inc({ agent, kind }, n);
  }
}
