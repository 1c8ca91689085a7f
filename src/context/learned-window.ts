import { DEFAULTS } from '../config/defaults';

export interface OverflowReading {
  /** The provider's limit, when its error said ("N tokens > M maximum"). */
  readonly providerMaxTokens?: number;
  /** The prompt size the provider counted, when its error said. */
  readonly providerPromptTokens?: number;
  /** What Keel estimated for the same prompt. */
  readonly estimatedPromptTokens: number;
  /** The window Keel used for the call. */
  readonly currentWindow: number;
}

/**
 * The window to use after a provider rejected a prompt as too long, in Keel's own token estimate:
 * the provider's maximum scaled by how far Keel's estimate fell short of the provider's count (so
 * budgeting with Keel's estimator stays under the real limit), with a safety share. Without a stated
 * maximum, a bit under what Keel sent. Never above the current window, never below the floor.
 *
 * @example windowFromOverflow({ providerMaxTokens: 32_000, providerPromptTokens: 40_000, estimatedPromptTokens: 30_000, currentWindow: 200_000 })
 *   // 22_800 = 32,000 × (30,000 / 40,000) × 0.95
 */
export function windowFromOverflow(reading: OverflowReading): number {
  const { providerMaxTokens: max, providerPromptTokens: counted, estimatedPromptTokens: estimated } = reading;
  let window: number;
  if (max !== undefined && max > 0) {
    const scale = counted !== undefined && counted > estimated && estimated > 0 ? estimated / counted : 1;
    window = max * scale * DEFAULTS.learnedWindowSafety;
  } else {
    window = Math.min(reading.currentWindow, estimated) * DEFAULTS.learnedWindowSafety * DEFAULTS.learnedWindowSafety;
  }
  return Math.max(DEFAULTS.minLearnedWindowTokens, Math.min(reading.currentWindow, Math.floor(window)));
}
