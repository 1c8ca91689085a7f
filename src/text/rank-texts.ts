import { bm25Score, type Bm25Collection } from './bm25';
import { indexTerms, queryTerms } from './search-terms';

/** One text's place in a keyword ranking: its index in the texts ranked, its BM25 score, the query terms it holds. */
export interface TextRank {
  readonly index: number;
  readonly score: number;
  readonly terms: readonly string[];
}

/**
 * BM25 over a few thousand short texts held in memory (memory notes, workspace lines), with the same
 * terms history search uses: stems, stop words dropped, "went" finding "go". Texts holding none of
 * the query's terms are left out; ties go to the lower index.
 *
 * @returns the ranking, best first, and the share of the texts holding each query term.
 * @example
 *   rankTexts(['the kiln is hot', 'we went to Porto'], 'going to porto').ranked // → [{ index: 1, … }]
 */
export function rankTexts(
  texts: readonly string[],
  query: string,
): { ranked: TextRank[]; share: (term: string) => number } {
  const terms = queryTerms(query);
  const wanted = new Set(terms);
  const counts = texts.map((text) => {
    const all = indexTerms(text);
    const held = new Map<string, number>();
    for (const term of all) if (wanted.has(term)) held.set(term, (held.get(term) ?? 0) + 1);
    return { length: all.length, held };
  });
  const documentFrequency = new Map(terms.map((t) => [t, counts.filter((c) => c.held.has(t)).length]));
  const collection: Bm25Collection = {
    entries: Math.max(1, texts.length),
    averageLength: counts.reduce((sum, c) => sum + c.length, 0) / Math.max(1, counts.length),
    documentFrequency,
  };
  const ranked = counts
    .flatMap((c, index) =>
      c.held.size > 0 ? [{ index, score: bm25Score(c.held, c.length, collection), terms: [...c.held.keys()] }] : [],
    )
    .sort((a, b) => b.score - a.score || a.index - b.index);
  return { ranked, share: (term) => (documentFrequency.get(term) ?? 0) / Math.max(1, texts.length) };
}
