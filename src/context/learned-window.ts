import { DEFAULTS } from '../config/defaults';

export interface OverflowReading {
  /** The provider's limit, when its error said ("N tokens > M maximum"). */
  readonly providerMaxTokens?: number;
  /** The prompt size the provider counted, when its error said. */
  readonly providerPromptTokens?: number;
  /** What Keel estimated for the same prompt. */
  readonly estimatedPromptTokens: number;
  /** The model's window Keel used for the call (before any session's scale). */
  readonly currentWindow: number;
}

/** What one "prompt is too long" teaches: the model's window, and how far this session's content fools Keel's estimate. */
export interface OverflowLesson {
  /** The model's window from now on, in Keel's token estimate: every session of the model budgets within it. */
  readonly modelWindow: number;
  /**
   * Keel's estimate over the provider's count for this prompt, when the estimate fell short (below 1):
   * a property of the session's content (identifiers, hex, rare scripts tokenize denser than prose), so
   * it scales that session's window only. Undefined when the provider did not say, or Keel did not fall short.
   */
  readonly sessionScale?: number;
}

/**
 * What to learn after a provider rejected a prompt as too long. With a stated maximum, the model's
 * window is that maximum with a safety share, and an estimate that fell short of the provider's count
 * becomes the session's scale: one session full of identifiers must not shrink the window of every
 * other session of the model, for good. Without a stated maximum, a bit under what Keel sent, for the
 * model (nothing tells the model's limit and the content's density apart). Never above the current
 * window, never below the floor.
 *
 * @example windowFromOverflow({ providerMaxTokens: 32_000, providerPromptTokens: 40_000, estimatedPromptTokens: 30_000, currentWindow: 200_000 })
 *   // { modelWindow: 30_400 (32,000 × 0.95), sessionScale: 0.75 (30,000 / 40,000) }
 */
export function windowFromOverflow(reading: OverflowReading): OverflowLesson {
  const { providerMaxTokens: max, providerPromptTokens: counted, estimatedPromptTokens: estimated } = reading;
  const clamp = (window: number) =>
    Math.max(DEFAULTS.minLearnedWindowTokens, Math.min(reading.currentWindow, Math.floor(window)));
  if (max === undefined || max <= 0) {
    return {
      modelWindow: clamp(
        Math.min(reading.currentWindow, estimated) * DEFAULTS.learnedWindowSafety * DEFAULTS.learnedWindowSafety,
      ),
    };
  }
  const modelWindow = clamp(max * DEFAULTS.learnedWindowSafety);
  const shortBy = counted !== undefined && counted > estimated && estimated > 0 ? estimated / counted : undefined;
  return shortBy === undefined ? { modelWindow } : { modelWindow, sessionScale: shortBy };
}

/**
 * A session's window: the model's, scaled by how far Keel's estimate fell short on this session's
 * content (see {@link OverflowLesson.sessionScale}), never below the floor.
 */
export function scaledWindow(modelWindow: number, sessionScale: number | null | undefined): number {
  if (sessionScale === null || sessionScale === undefined || !(sessionScale > 0) || sessionScale >= 1)
    return modelWindow;
  return Math.max(Math.min(modelWindow, DEFAULTS.minLearnedWindowTokens), Math.floor(modelWindow * sessionScale));
}

/** A successful call's measurement of the session's estimate: Keel's count of the prompt against the provider's. */
export interface ScaleReading {
  /** What Keel estimated for the prompt it sent (system prompt, tools and messages). */
  readonly estimatedPromptTokens: number;
  /** What the provider counted for it: uncached input, cache reads and cache writes together. */
  readonly providerPromptTokens: number;
  /** The call's prompt budget: the session's window in force (already scaled) less the reply's reserve. */
  readonly budget: number;
  /** The session's estimate scale when the call was made (null: none). */
  readonly scale: number | null | undefined;
}

/**
 * The session's estimate scale after a successful call, when the call's usage shows its content now
 * counts lighter than the scale assumes: the content that fooled the estimate was compacted away, or
 * the conversation moved on to prose. Undefined when nothing changes: no scale to raise (a session
 * lowers its scale only at a refusal, which states both counts), a prompt too small for its fixed
 * parts not to dominate the reading (under half the call's budget), or a rise too small to be worth
 * a write. Null clears the scale (the estimate no longer falls short).
 *
 * @example scaleAfterReading({ estimatedPromptTokens: 6_000, providerPromptTokens: 6_500, budget: 9_000, scale: 0.35 })
 *   // 0.923 (the window in force grows from 0.35 to 0.923 of the model's)
 */
export function scaleAfterReading(reading: ScaleReading): number | null | undefined {
  const { scale, estimatedPromptTokens: estimated, providerPromptTokens: counted } = reading;
  if (scale === null || scale === undefined || !(scale > 0) || scale >= 1) return undefined;
  if (!(counted > 0) || estimated < reading.budget * DEFAULTS.scaleReadingMinBudgetShare) return undefined;
  const measured = estimated / counted;
  if (measured >= 1) return null;
  if (measured < scale + DEFAULTS.scaleRiseMinStep) return undefined;
  return Math.floor(measured * 1000) / 1000;
}

/** The window in force: the configured one, lowered by the model's learned window, scaled by the session's estimate scale. */
export function windowInForceOf(
  configured: number,
  learned: number | undefined,
  sessionScale: number | null | undefined,
): number {
  return scaledWindow(learned === undefined ? configured : Math.min(learned, configured), sessionScale);
}
