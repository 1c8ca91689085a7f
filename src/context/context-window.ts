/**
 * Context-window resolution and the thresholds derived from it (OpenClaw's context window
 * resolution, reserve floor, memory-flush soft threshold and status pressure levels).
 */
import { DEFAULTS } from '../config/defaults';

/** Reserve used when the config sets none (Pi's `reserveTokens` default); the 20,000 floor raises it. */
export const DEFAULT_RESERVE_TOKENS = DEFAULTS.reserveTokens;

/** A model's entry in `models.providers.<provider>.models` of the config. */
export interface ModelWindowOverride {
  id: string;
  contextWindow?: number | undefined;
}

export interface ContextWindowConfig {
  models?:
    { providers?: Record<string, { models?: ModelWindowOverride[] | undefined } | undefined> | undefined } | undefined;
}

/** A model catalog row (provider-qualified). */
export interface CatalogModel {
  provider?: string;
  id: string;
  contextWindow?: number;
}

export interface ResolveContextWindowInput {
  provider: string;
  model: string;
  config?: ContextWindowConfig | undefined;
  catalog?: readonly CatalogModel[] | undefined;
  /** The agent's `contextTokens` cap: lowers the window, never raises it. */
  agentContextTokens?: number | undefined;
  /** The window when neither config nor catalog knows the model (default 200,000). */
  defaultTokens?: number | undefined;
}

export type ContextWindowSource = 'config' | 'catalog' | 'agentContextTokens' | 'default';

export interface ContextWindow {
  tokens: number;
  /** Which setting decided the number. */
  source: ContextWindowSource;
}

/**
 * Resolves the context window: the per-provider model override in config → the catalog value →
 * the default (200,000 unless `defaultTokens`); then the agent's `contextTokens` cap applies when it is lower.
 *
 * @example resolveContextWindowTokens({ provider: 'anthropic', model: 'claude-x', agentContextTokens: 100_000 })
 *   // { tokens: 100_000, source: 'agentContextTokens' }
 */
export function resolveContextWindowTokens(input: ResolveContextWindowInput): ContextWindow {
  const override = input.config?.models?.providers?.[input.provider]?.models?.find(
    (m) => m.id === input.model,
  )?.contextWindow;
  const fromCatalog = input.catalog?.find(
    (m) => m.id === input.model && (m.provider === undefined || m.provider === input.provider),
  )?.contextWindow;
  let window: ContextWindow = positive(override)
    ? { tokens: override as number, source: 'config' }
    : positive(fromCatalog)
      ? { tokens: fromCatalog as number, source: 'catalog' }
      : { tokens: input.defaultTokens ?? DEFAULTS.contextWindowTokens, source: 'default' };
  const cap = input.agentContextTokens;
  if (positive(cap) && (cap as number) < window.tokens)
    window = { tokens: cap as number, source: 'agentContextTokens' };
  return window;
}

/**
 * The reserve kept free for the reply and the prompt scaffolding: `reserveTokens` (default 16,384)
 * raised to at least `reserveTokensFloor` (default 20,000; 0 disables the floor).
 */
export function resolveReserveTokens(input: ReserveSettings = {}): number {
  const reserve =
    input.reserveTokens !== undefined && input.reserveTokens >= 0 ? input.reserveTokens : DEFAULT_RESERVE_TOKENS;
  const floor = input.reserveTokensFloor ?? DEFAULTS.reserveTokensFloor;
  return floor > 0 ? Math.max(reserve, floor) : reserve;
}

/** The reserve settings of a config or a replay policy (unset: Keel's defaults). */
export interface ReserveSettings {
  readonly reserveTokens?: number;
  readonly reserveTokensFloor?: number;
}

/**
 * The reserve for a given window: the resolved reserve, but never more than half the window, so a
 * small window (a local model, configured or learned) still leaves room for history.
 *
 * @example effectiveReserveTokens(200_000, 16_384) // 20_000 (the floor)
 * @example effectiveReserveTokens(30_000, 16_384)  // 15_000
 * @example effectiveReserveTokens(4_000, 16_384)   // 2_000
 */
export function effectiveReserveTokens(
  contextWindow: number,
  reserveTokens?: number,
  reserveTokensFloor?: number,
): number {
  const reserve = resolveReserveTokens({
    ...(reserveTokens !== undefined ? { reserveTokens } : {}),
    ...(reserveTokensFloor !== undefined ? { reserveTokensFloor } : {}),
  });
  return Math.min(reserve, Math.floor(contextWindow * DEFAULTS.maxReserveWindowShare));
}

/** `effectiveReserveTokens` of a config's (or policy's) reserve settings. */
export function reserveForWindow(contextWindow: number, settings: ReserveSettings): number {
  return effectiveReserveTokens(contextWindow, settings.reserveTokens, settings.reserveTokensFloor);
}

/**
 * The `max_tokens` a model call asks for in a window: the configured `maxOutputTokens`, never more
 * than the reserve (the prompt is budgeted to the window less the reserve, and the provider refuses a
 * prompt plus `max_tokens` over its window). Unset, the default (4,096) is also held to half the
 * reserve, so a small window keeps slack for estimates that fall short.
 *
 * @example maxOutputTokensFor(200_000, {}) // 4_096
 * @example maxOutputTokensFor(4_000, {})   // 1_000 (half the 2,000 reserve)
 */
export function maxOutputTokensFor(
  contextWindow: number,
  settings: ReserveSettings & { readonly maxOutputTokens?: number | undefined },
): number {
  const reserve = reserveForWindow(contextWindow, settings);
  const wanted =
    settings.maxOutputTokens ??
    Math.min(DEFAULTS.maxOutputTokens, Math.floor(reserve * DEFAULTS.defaultOutputReserveShare));
  return Math.max(1, Math.min(wanted, reserve));
}

/** Threshold compaction after a successful turn: `contextTokens > contextWindow − reserveTokens`. */
export function shouldCompactAfterTurn(contextTokens: number, contextWindow: number, reserveTokens: number): boolean {
  return contextTokens > contextWindow - reserveTokens;
}

/**
 * Where the memory flush starts: `softThresholdTokens` (default 4,000) below the compaction
 * threshold, but never more than a quarter of the budget below it, so in a small window the flush
 * still comes near the compaction it precedes, not on the first turn.
 *
 * @example memoryFlushThresholdTokens(200_000, 20_000) // 176_000
 * @example memoryFlushThresholdTokens(4_000, 2_000)    // 1_500
 */
export function memoryFlushThresholdTokens(
  contextWindow: number,
  reserveTokens: number,
  softThresholdTokens: number = DEFAULTS.softThresholdTokens,
): number {
  const budget = Math.max(0, contextWindow - reserveTokens);
  return budget - Math.min(softThresholdTokens, Math.floor(budget * DEFAULTS.maxSoftThresholdBudgetShare));
}

export interface MemoryFlushInput {
  contextTokens: number;
  contextWindow: number;
  reserveTokens: number;
  softThresholdTokens?: number | undefined;
  /** The session's compaction count now … */
  compactionCount?: number | undefined;
  /** … and when the last flush ran: equal means this cycle already flushed. */
  memoryFlushCompactionCount?: number | undefined;
}

/** True when context crossed the soft threshold and this compaction cycle has not flushed yet. */
export function shouldRunMemoryFlush(input: MemoryFlushInput): boolean {
  if (
    input.memoryFlushCompactionCount !== undefined &&
    input.memoryFlushCompactionCount === (input.compactionCount ?? 0)
  ) {
    return false;
  }
  return (
    input.contextTokens >=
    memoryFlushThresholdTokens(input.contextWindow, input.reserveTokens, input.softThresholdTokens)
  );
}

/** Context pressure: < 50% normal, 50–70% '50', 70–85% '70', above 85% '85' (OpenClaw's pressure levels). */
export type PressureLevel = 'normal' | '50' | '70' | '85';

/** The pressure level of `usedTokens` in a window (85% exactly is still '70'; "above 85%" checkpoints). */
export function pressureLevel(usedTokens: number, contextWindow: number): PressureLevel {
  const percent = contextWindow > 0 ? (usedTokens / contextWindow) * 100 : 100;
  if (percent > 85) return '85';
  if (percent >= 70) return '70';
  if (percent >= 50) return '50';
  return 'normal';
}

function positive(value: number | undefined): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}
