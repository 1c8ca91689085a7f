import { DEFAULTS } from '../config/defaults';
import type { CompactionTriggerName } from '../protocol';

/**
 * The recent tail a compaction keeps verbatim, in tokens: what was asked for, else Pi's 20,000 for an
 * automatic compaction and none for a manual one (a hard checkpoint); never more than a quarter of the
 * window, or a small window would keep everything and reclaim nothing.
 * @example keptTailTokens(undefined, 'threshold', 40_000) // 10_000
 */
export function keptTailTokens(requested: number | undefined, trigger: CompactionTriggerName, window: number): number {
  const wanted = requested ?? (trigger === 'manual' ? 0 : DEFAULTS.keepRecentTokens);
  return Math.min(wanted, Math.floor(window * DEFAULTS.keepRecentMaxWindowShare));
}
