/**
 * Fusing the keyword (BM25) and dense rankings of the same entries into one. By rank, not by raw
 * score: BM25 scores and cosines live on unrelated scales, and a rank-based fusion needs no tuning
 * per corpus. An entry found by one side only still scores; one found by both rises.
 */

/** One ranking's entry: its seq and its score on that side (higher is better), best first. */
export interface Ranked {
  readonly seq: number;
  readonly score: number;
}

/** How two rankings are fused. */
export interface FusionOptions {
  /** `rrf`: Σ weight / (k + rank); `keywords` / `dense`: one side alone (the bench's ablation). */
  readonly method: 'rrf' | 'keywords' | 'dense';
  /** RRF's k: larger flattens the head of each ranking. */
  readonly k: number;
  /** The dense side's weight against the keyword side's 1. */
  readonly denseWeight: number;
}

/**
 * The fused ranking, best first; ties go to the newer entry. Reciprocal rank fusion
 * (Cormack, Clarke and Büttcher 2009) with a weight on the dense side.
 *
 * @example
 *   fuseRankings([{ seq: 1, score: 9 }], [{ seq: 2, score: 0.8 }, { seq: 1, score: 0.7 }], { method: 'rrf', k: 60, denseWeight: 1 })
 *   // → seq 1 first (found by both), then seq 2
 */
export function fuseRankings(keywords: readonly Ranked[], dense: readonly Ranked[], opts: FusionOptions): Ranked[] {
  if (opts.method === 'keywords' || dense.length === 0) return [...keywords];
  if (opts.method === 'dense') return [...dense];
  const fused = new Map<number, number>();
  keywords.forEach((r, i) => fused.set(r.seq, (fused.get(r.seq) ?? 0) + 1 / (opts.k + i + 1)));
  dense.forEach((r, i) => fused.set(r.seq, (fused.get(r.seq) ?? 0) + opts.denseWeight / (opts.k + i + 1)));
  return [...fused].map(([seq, score]) => ({ seq, score })).sort((a, b) => b.score - a.score || b.seq - a.seq);
}
