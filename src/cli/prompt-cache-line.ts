import type { SessionStatus } from '../protocol';

/**
 * `prompt cache 82.4% hit · 41,200 read · 9,800 written · 1,100 uncached tokens` for `keel status`,
 * ending `(estimated: …)` when a server reported no usage and the figures are partly Keel's count.
 */
export function promptCacheLine(cache: NonNullable<SessionStatus['promptCache']>): string {
  const n = (tokens: number): string => tokens.toLocaleString('en-US');
  const estimated = cache.estimated ? ` (estimated: the model server reported no usage, Keel counted)` : '';
  return `prompt cache ${cache.hitRatePercent.toFixed(1)}% hit · ${n(cache.cacheReadTokens)} read · ${n(cache.cacheWriteTokens)} written · ${n(cache.inputTokens)} uncached tokens${estimated}`;
}
