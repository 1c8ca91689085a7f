/**
 * Okapi BM25, the ranking of classic full-text search: a term counts more the rarer it is in the
 * collection (IDF), each repeat in an entry adds less (k1 saturation), and long entries are
 * normalised against the average length (b).
 */

/** Term-frequency saturation: the usual value. */
const K1 = 1.2;
/** Length normalisation: the usual value. */
const B = 0.75;

/** What the collection says about the query's terms. */
export interface Bm25Collection {
  /** Entries searched (an estimate is fine: IDF is a logarithm). */
  readonly entries: number;
  /** Mean terms per entry. */
  readonly averageLength: number;
  /** Per query term, the entries holding it. */
  readonly documentFrequency: ReadonlyMap<string, number>;
}

/** The inverse document frequency of a term held by `df` of `n` entries (never negative). */
export function inverseDocumentFrequency(n: number, df: number): number {
  return Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5));
}

/** The BM25 score of one entry of `length` terms, holding each query term `termCounts.get(t)` times. */
export function bm25Score(termCounts: ReadonlyMap<string, number>, length: number, collection: Bm25Collection): number {
  const norm = K1 * (1 - B + (B * length) / Math.max(1, collection.averageLength));
  let score = 0;
  for (const [term, tf] of termCounts) {
    const df = collection.documentFrequency.get(term);
    if (df === undefined || tf <= 0) continue;
    score += inverseDocumentFrequency(collection.entries, df) * ((tf * (K1 + 1)) / (tf + norm));
  }
  return score;
}
