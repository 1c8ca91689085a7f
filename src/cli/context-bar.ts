import type { SessionStatus } from '../protocol';

/** A one-line context-usage bar for the terminal: `[██████░░░░░░] 48.2% of 200k · normal`. */
export function contextBar(status: Pick<SessionStatus, 'contextTokens' | 'contextWindow' | 'percentUsed' | 'pressure'>, width = 24): string {
  const ratio = status.contextWindow > 0 ? Math.min(1, status.contextTokens / status.contextWindow) : 0;
  const filled = Math.round(ratio * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const windowK = `${Math.round(status.contextWindow / 1000)}k`;
  const pressure = status.pressure === 'normal' ? 'normal' : `above ${status.pressure}%`;
  return `[${bar}] ${status.percentUsed.toFixed(1)}% of ${windowK} tokens · ${pressure}`;
}
