import { DEFAULTS } from '../config/defaults';

/**
 * Keel's one estimate of tokens from a length alone (`charsPerToken` characters a token, rounded
 * up), where tokenizing costs too much (a 20 MB tool result) or a budget is only rough (recall pages).
 * Everywhere else the tokenizer counts (`estimate-tokens.ts`).
 * @example tokensOfLength(10) // 3
 */
export function tokensOfLength(chars: number, safetyMargin = 1): number {
  return Math.ceil((chars / DEFAULTS.charsPerToken) * safetyMargin);
}
