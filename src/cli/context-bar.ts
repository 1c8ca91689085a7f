import type { ContextSplit, SessionStatus } from '../protocol';
import { DEFAULTS } from '../config/defaults';

/** A one-line context-usage bar for the terminal: `[██████░░░░░░] 48.2% of 200k · normal`; from 65% it warns the user. */
export function contextBar(
  status: Pick<SessionStatus, 'contextTokens' | 'contextWindow' | 'percentUsed' | 'pressure'>,
  width = 24,
): string {
  const ratio = status.contextWindow > 0 ? Math.min(1, status.contextTokens / status.contextWindow) : 0;
  const filled = Math.round(ratio * width);
  const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
  const windowK = `${Math.round(status.contextWindow / 1000)}k`;
  const pressure = status.pressure === 'normal' ? 'normal' : `above ${status.pressure}%`;
  const warning =
    status.percentUsed >= DEFAULTS.contextWarningPercent
      ? ` · warning: over ${DEFAULTS.contextWarningPercent}% of the window used; /compact (keel compact) or /new soon`
      : '';
  return `[${bar}] ${status.percentUsed.toFixed(1)}% of ${windowK} tokens · ${pressure}${warning}`;
}

/**
 * What the context is made of, as a bar of one letter per part plus the counts:
 * `[SSWWTTHHHHHH······] system 2.1k · workspace 1.4k · tools 0.9k · history 6.0k of 200k`.
 */
export function contextSplitBar(split: ContextSplit, contextWindow: number, width = 24): string {
  const parts: Array<[string, string, number]> = [
    ['S', 'system', split.systemTokens],
    ['W', 'workspace', split.bootstrapTokens],
    ['T', 'tools', split.toolTokens],
    ['H', 'history', split.historyTokens],
  ];
  const scale = contextWindow > 0 ? width / contextWindow : 0;
  let bar = '';
  for (const [letter, , tokens] of parts)
    bar += letter.repeat(Math.min(width - bar.length, Math.round(tokens * scale)));
  bar += '·'.repeat(Math.max(0, width - bar.length));
  const k = (tokens: number) => `${(tokens / 1000).toFixed(1)}k`;
  return `[${bar}] ${parts.map(([, name, tokens]) => `${name} ${k(tokens)}`).join(' · ')} of ${Math.round(contextWindow / 1000)}k`;
}
