/**
 * The line that tells the truth about a small window: below the window a model summary needs, every
 * compaction is extractive. `keel dev` says it once at start (so `--check` shows it too) and `keel
 * agents` beside the agent, with the window that would do.
 */
import type { KeelConfig } from '../config/keel-config';
import { configuredWindow } from '../config/configured-window';
import { estimateTokens } from '../context/estimate-tokens';
import { baseSummaryPromptTokens, smallestSummaryWindow, summaryFits } from '../compaction/summary-window';

/** An agent whose window is too small for a model summary: its window and the smallest that fits one. */
export interface SmallWindow {
  readonly window: number;
  readonly summaryNeeds: number;
}

/** The agent's window and the one a model summary needs, or null when a summary fits. */
export function smallWindowOf(config: KeelConfig): SmallWindow | null {
  const window = configuredWindow(config).tokens;
  const promptTokens = baseSummaryPromptTokens((text) => estimateTokens({ role: 'user', content: text }));
  const reserve = { reserveTokens: config.reserveTokens, reserveTokensFloor: config.reserveTokensFloor };
  if (summaryFits(window, promptTokens, reserve)) return null;
  return { window, summaryNeeds: smallestSummaryWindow(promptTokens, reserve) };
}

/** `window 2,048 tokens is too small for a model summary: …`, naming the window that would do. */
export function smallWindowText(small: SmallWindow): string {
  const n = (tokens: number): string => tokens.toLocaleString('en-US');
  return `window ${n(small.window)} tokens is too small for a model summary: every compaction will be extractive (a summary needs a window of ${n(small.summaryNeeds)} tokens; raise the server's context size and the model's contextWindow in keel.config.json)`;
}
