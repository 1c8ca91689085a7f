/**
 * The "what is eating my context?" estimate: count what is in the active window (since the last
 * compaction) and multiply by per-item ranges, reported as ranges rather than false precision, each
 * beside what Keel's own token estimates measured for the same items. The fixed baseline (system
 * prompt, workspace files, tools) is no guess: it is what the session's last call measured, the
 * split `keel status` shows, or unknown when no call reported one.
 */
import type { PromptOverhead } from '../context/context-split';
import type { ProfileEntry } from './profile-entries';
import { activeWindowStart } from '../context/active-window';

/** Typical per-item ranges (tokens). */
const RANGES = {
  user: [100, 500],
  assistant: [200, 1_000],
  toolResult: [500, 5_000],
  summary: [2_000, 5_000],
} as const;

export interface EstimatePart {
  readonly part: 'fixed baseline' | 'user messages' | 'assistant replies' | 'tool results' | 'compaction summary';
  readonly count: number;
  readonly low: number;
  readonly high: number;
  /** Keel's estimate of the same items (for the baseline: the last call's, as `keel status` shows it). */
  readonly measured?: number;
}

export interface ContextEstimate {
  readonly window: number;
  readonly parts: EstimatePart[];
  /** The baseline's split as the session's last call measured it; `unknown` when none reported it. */
  readonly baseline: PromptOverhead | 'unknown';
  readonly total: { readonly low: number; readonly high: number };
}

/** The entries the model sees now: after the newest compaction, from its first kept entry (`activeWindowStart`). */
function activeWindow(entries: readonly ProfileEntry[]): { entries: ProfileEntry[]; summary?: ProfileEntry } {
  const { start, compaction } = activeWindowStart(entries, (e) =>
    e.kind === 'compaction' ? e.firstKeptEntryId : undefined,
  );
  const summary = compaction === undefined ? undefined : entries[compaction];
  return { entries: entries.slice(start).filter((e) => e.kind !== 'compaction'), ...(summary ? { summary } : {}) };
}

/** The estimate of the active window; `overhead` is the session's measured baseline, when known. */
export function estimateContext(
  entries: readonly ProfileEntry[],
  window: number,
  overhead?: PromptOverhead,
): ContextEstimate {
  const active = activeWindow(entries);
  const of = (kind: ProfileEntry['kind']) => active.entries.filter((e) => e.kind === kind);
  const part = (name: EstimatePart['part'], items: ProfileEntry[], range: readonly [number, number]): EstimatePart => ({
    part: name,
    count: items.length,
    low: items.length * range[0],
    high: items.length * range[1],
    measured: items.reduce((n, e) => n + e.tokens, 0),
  });
  const baseline = overhead ? overhead.systemTokens + overhead.bootstrapTokens + overhead.toolTokens : undefined;
  const parts: EstimatePart[] = [
    ...(baseline !== undefined
      ? [{ part: 'fixed baseline' as const, count: 1, low: baseline, high: baseline, measured: baseline }]
      : []),
    part('user messages', of('user'), RANGES.user),
    part('assistant replies', of('assistant'), RANGES.assistant),
    part('tool results', of('toolResult'), RANGES.toolResult),
    part('compaction summary', active.summary ? [active.summary] : [], RANGES.summary),
  ];
  return {
    window,
    parts,
    baseline: overhead
      ? {
          systemTokens: overhead.systemTokens,
          bootstrapTokens: overhead.bootstrapTokens,
          toolTokens: overhead.toolTokens,
        }
      : 'unknown',
    total: { low: parts.reduce((n, p) => n + p.low, 0), high: parts.reduce((n, p) => n + p.high, 0) },
  };
}
