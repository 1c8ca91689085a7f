import { DEFAULTS } from '../config/defaults';
import { estimateTokens } from '../context/estimate-tokens';
import { tokensOfLength } from '../context/length-tokens';
import type { AgentMessage } from '../context/types';

/** Above this many characters a message is estimated from its length: tokenizing megabytes costs seconds. */
const TOKENIZE_LIMIT_CHARS = DEFAULTS.tokenizeLimitChars;

/**
 * The estimate stored with each entry: gpt-tokenizer × 1.2 for ordinary messages, a length-based
 * estimate (same margin) for huge ones such as a 20 MB tool result, which the model never sees whole.
 */
export function boundedEstimate(message: AgentMessage): number {
  const chars = JSON.stringify(message.content).length;
  if (chars > TOKENIZE_LIMIT_CHARS) return tokensOfLength(chars, DEFAULTS.tokenSafetyMargin);
  return estimateTokens(message);
}
