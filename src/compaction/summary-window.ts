/**
 * Whether a model summary fits a window: the room left for conversation text once the reply, the
 * summarizer's prompt and the summarization overhead are taken out. One rule for the summarizer's
 * room check and for the start-up line that says a window is too small and which one would do.
 */
import { DEFAULTS } from '../config/defaults';
import { maxOutputTokensFor, type ReserveSettings } from '../context/context-window';
import { summarizationOverheadTokens } from './summary-budget';
import { chunkSummaryInstructions, SUMMARIZER_SYSTEM_PROMPT } from './prompts';

/** Tokens left for conversation text in a summarizer window of `size`, after its prompt (`promptTokens`). */
export function summaryRoomTokens(size: number, promptTokens: number, reserve: ReserveSettings): number {
  return size - maxOutputTokensFor(size, reserve) - promptTokens - summarizationOverheadTokens(size);
}

/** True when a window of `size` leaves a model summary enough room ({@link DEFAULTS.minSummaryRoomTokens}). */
export function summaryFits(size: number, promptTokens: number, reserve: ReserveSettings): boolean {
  return summaryRoomTokens(size, promptTokens, reserve) >= DEFAULTS.minSummaryRoomTokens;
}

/** The summarizer prompt's own tokens with the default instructions and no previous summary. */
export function baseSummaryPromptTokens(countTokens: (text: string) => number): number {
  return countTokens(`${SUMMARIZER_SYSTEM_PROMPT}\n${chunkSummaryInstructions({ identifierPolicy: 'strict' })}`);
}

/**
 * The smallest window in which a model summary fits (rounded up to 256 tokens), for the message that
 * says a window is too small.
 * @example smallestSummaryWindow(700, {}) // 4_096 with Keel's default reserve
 */
export function smallestSummaryWindow(promptTokens: number, reserve: ReserveSettings): number {
  const step = 256;
  let low = 1;
  let high = 4_096;
  if (!summaryFits(high * step, promptTokens, reserve)) return high * step;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if (summaryFits(mid * step, promptTokens, reserve)) high = mid;
    else low = mid + 1;
  }
  return low * step;
}
