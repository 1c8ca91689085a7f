/**
 * The process-wide context-engine registry (OpenClaw's context-engine registry and slot resolution): one engine slot,
 * chosen by `plugins.slots.contextEngine`, default `legacy`.
 */
import { AnthropicNativeContextEngine } from './anthropic-native';
import { BudgetedContextEngine } from './budgeted';
import { LegacyContextEngine } from './legacy';
import type { ContextEngine, ContextEngineFactory, ContextEngineOptions } from './types';

/** The engine used when the config names none. */
export const DEFAULT_CONTEXT_ENGINE_ID = 'legacy';

/** The config fields resolution reads. */
export interface ContextEngineConfig {
  plugins?: { slots?: { contextEngine?: string } };
  /** Options passed to the engine factory. */
  contextEngine?: ContextEngineOptions;
}

/** Thrown when the config selects an engine id nobody registered. */
export class UnknownContextEngineError extends Error {
  override readonly name = 'UnknownContextEngineError';
  constructor(
    readonly engineId: string,
    readonly registered: string[],
  ) {
    super(
      `plugins.slots.contextEngine is "${engineId}", which is not registered; use one of ${registered.join(', ')} or call registerContextEngine("${engineId}", factory) first`,
    );
  }
}

const factories = new Map<string, ContextEngineFactory>([
  ['legacy', () => new LegacyContextEngine()],
  ['budgeted', (options) => new BudgetedContextEngine(options)],
  ['anthropic-native', (options) => new AnthropicNativeContextEngine(options)],
]);

/**
 * Registers (or replaces) the factory for an engine id. Returns a function that removes it again
 * (built-in ids are restored to their built-in factory).
 */
export function registerContextEngine(id: string, factory: ContextEngineFactory): () => void {
  const previous = factories.get(id);
  factories.set(id, factory);
  return () => {
    if (previous) factories.set(id, previous);
    else factories.delete(id);
  };
}

/** The ids that can be selected. */
export function registeredContextEngines(): string[] {
  return [...factories.keys()];
}

/** Builds the engine the config selects (`plugins.slots.contextEngine`, default `legacy`). */
export function resolveContextEngine(config: ContextEngineConfig = {}): ContextEngine {
  const id = config.plugins?.slots?.contextEngine?.trim() || DEFAULT_CONTEXT_ENGINE_ID;
  const factory = factories.get(id);
  if (!factory) throw new UnknownContextEngineError(id, registeredContextEngines());
  return factory(config.contextEngine ?? {});
}
