/**
 * Chunk sizing rules (OpenClaw constants): how much of the window one summarizer call may take, and
 * when a single message is too big to summarize at all.
 */
import { DEFAULTS } from '../config/defaults';
import type { AgentMessage } from '../context/types';
import type { EstimateTokens } from './types';

/** Above this average message share of the window the chunk ratio shrinks (OpenClaw). */
const LARGE_AVERAGE_MESSAGE_SHARE = DEFAULTS.largeAverageMessageShare;
/** A message whose margin-inflated estimate exceeds this share of the window is oversized (OpenClaw). */
const OVERSIZED_WINDOW_SHARE = DEFAULTS.oversizedWindowShare;

/**
 * Share of the window one chunk may use: `baseChunkRatio`, reduced towards `minChunkRatio` when the
 * average message (with the safety margin) exceeds `largeAverageMessageShare` of the window, by
 * twice that share.
 *
 * @example computeAdaptiveChunkRatio(msgs, 200_000, est) // 0.4 for ordinary chat
 */
export function computeAdaptiveChunkRatio(
  messages: readonly AgentMessage[],
  contextWindow: number,
  estimate: EstimateTokens,
): number {
  if (messages.length === 0 || contextWindow <= 0) return DEFAULTS.baseChunkRatio;
  let total = 0;
  for (const m of messages) total += estimate(m);
  const averageShare = ((total / messages.length) * DEFAULTS.tokenSafetyMargin) / contextWindow;
  if (averageShare <= LARGE_AVERAGE_MESSAGE_SHARE) return DEFAULTS.baseChunkRatio;
  const reduction = Math.min(averageShare * 2, DEFAULTS.baseChunkRatio - DEFAULTS.minChunkRatio);
  return Math.max(DEFAULTS.minChunkRatio, DEFAULTS.baseChunkRatio - reduction);
}

/** True when the message's estimate (with the safety margin) exceeds `oversizedWindowShare` of the window: it is replaced by a note when summarizing. */
export function isOversizedForSummary(message: AgentMessage, contextWindow: number, estimate: EstimateTokens): boolean {
  return estimate(message) * DEFAULTS.tokenSafetyMargin > contextWindow * OVERSIZED_WINDOW_SHARE;
}

/** The note that stands in for an oversized message, e.g. `[Large toolResult (~120K tokens) omitted from summary]`. */
export function oversizedNote(message: AgentMessage, tokens: number): string {
  const size = tokens >= 1000 ? `${Math.round(tokens / 1000)}K` : String(tokens);
  return `[Large ${message.role} (~${size} tokens) omitted from summary]`;
}
