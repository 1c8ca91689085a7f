/**
 * The "what is eating my context?" estimate: count what is in the active window (since the last
 * compaction) and multiply by per-item ranges, reported as ranges rather than false precision, each
 * beside what Keel's own token estimates measured for the same items.
 */
import type { ProfileEntry } from './profile-entries';

/** Typical per-item ranges (tokens), and the fixed baseline as a share of the window. */
const RANGES = {
  user: [100, 500],
  assistant: [200, 1_000],
  toolResult: [500, 5_000],
  summary: [2_000, 5_000],
} as const;
const BASELINE_SHARE = [0.05, 0.15] as const;

export interface EstimatePart {
  readonly part: 'fixed baseline' | 'user messages' | 'assistant replies' | 'tool results' | 'compaction summary';
  readonly count: number;
  readonly low: number;
  readonly high: number;
  /** Keel's estimate of the same items (absent for the baseline, which the transcript does not hold). */
  readonly measured?: number;
}

export interface ContextEstimate {
  readonly window: number;
  readonly parts: EstimatePart[];
  readonly total: { readonly low: number; readonly high: number };
}

/** The entries the model sees now: after the newest compaction, from its first kept entry. */
function activeWindow(entries: readonly ProfileEntry[]): { entries: ProfileEntry[]; summary?: ProfileEntry } {
  let start = 0;
  let summary: ProfileEntry | undefined;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind !== 'compaction') continue;
    summary = e;
    const kept = entries.findIndex((x) => x.id === e.firstKeptEntryId);
    start = kept >= 0 && kept < i ? kept : i + 1;
    break;
  }
  return { entries: entries.slice(start).filter((e) => e.kind !== 'compaction'), ...(summary ? { summary } : {}) };
}

export function estimateContext(entries: readonly ProfileEntry[], window: number): ContextEstimate {
  const active = activeWindow(entries);
  const of = (kind: ProfileEntry['kind']) => active.entries.filter((e) => e.kind === kind);
  const part = (name: EstimatePart['part'], items: ProfileEntry[], range: readonly [number, number]): EstimatePart => ({
    part: name,
    count: items.length,
    low: items.length * range[0],
    high: items.length * range[1],
    measured: items.reduce((n, e) => n + e.tokens, 0),
  });
  const parts: EstimatePart[] = [
    { part: 'fixed baseline', count: 1, low: Math.round(window * BASELINE_SHARE[0]), high: Math.round(window * BASELINE_SHARE[1]) },
    part('user messages', of('user'), RANGES.user),
    part('assistant replies', of('assistant'), RANGES.assistant),
    part('tool results', of('toolResult'), RANGES.toolResult),
    part('compaction summary', active.summary ? [active.summary] : [], RANGES.summary),
  ];
  return { window, parts, total: { low: parts.reduce((n, p) => n + p.low, 0), high: parts.reduce((n, p) => n + p.high, 0) } };
}
