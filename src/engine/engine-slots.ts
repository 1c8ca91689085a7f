/**
 * A worker's context engines: one slot per agent configuration, built on first use and kept for the
 * worker's lifetime, so an engine is one instance per worker and not one per call.
 */
import { DEFAULTS } from '../config/defaults';
import { ContextEngineSlot, type EngineSlotReporter } from './engine-slot';
import { resolveContextEngine } from './registry';
import type { ContextEngineOptions } from './types';

/** The config fields a slot is built from (an agent's `KeelConfig`). */
export interface EngineSlotConfig {
  readonly contextEngine: string;
  readonly contextEngineOptions?: ContextEngineOptions | undefined;
}

/** The slots of one worker, by agent config; `close` disposes every session they hold. */
export class EngineSlots {
  private readonly slots = new Map<EngineSlotConfig, ContextEngineSlot>();
  private reporter: EngineSlotReporter = { failed: () => {}, evicted: () => {} };

  constructor(private readonly maxSessions: number = DEFAULTS.contextEngineSessionsPerWorker) {}

  /** Where failures go: the worker sets its log and metrics when it builds its activities. */
  reportTo(reporter: EngineSlotReporter): void {
    this.reporter = reporter;
  }

  /** The slot of an agent's config (the same object every call gets the same slot). */
  for(config: EngineSlotConfig): ContextEngineSlot {
    let slot = this.slots.get(config);
    if (!slot) {
      const engine = resolveContextEngine({
        plugins: { slots: { contextEngine: config.contextEngine } },
        ...(config.contextEngineOptions ? { contextEngine: config.contextEngineOptions } : {}),
      });
      slot = new ContextEngineSlot(
        engine,
        {
          failed: (...args) => this.reporter.failed(...args),
          evicted: (...args) => this.reporter.evicted(...args),
        },
        this.maxSessions,
      );
      this.slots.set(config, slot);
    }
    return slot;
  }

  /** The worker stops: each engine disposes the sessions it holds. */
  async close(): Promise<void> {
    for (const slot of this.slots.values()) await slot.close();
  }
}
