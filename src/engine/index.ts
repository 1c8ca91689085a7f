/** Context engines: the slot interface, the registry, and the built-in engines. */
export * from './types';
export { LegacyContextEngine } from './legacy';
export { BudgetedContextEngine, clearedNote } from './budgeted';
export {
  registerContextEngine,
  resolveContextEngine,
  registeredContextEngines,
  UnknownContextEngineError,
  DEFAULT_CONTEXT_ENGINE_ID,
} from './registry';
export type { ContextEngineConfig } from './registry';
