import { indexTerms } from '../text/search-terms';

/**
 * What the dense side embeds of a question: the question less the words most entries hold. In a
 * conversation those are the names of the people talking (every line carries one); a small model's
 * similarity is dominated by them, so a question naming someone ranks every line of theirs alike.
 * Keywords still match the names: only the dense side leaves them out.
 *
 * @param isCommon says whether a word's search term is held by too many entries to tell them apart.
 * @example
 *   denseQueryText('What did Caroline research?', (t) => t === 'caroline') // → 'What did research?'
 */
export function denseQueryText(query: string, isCommon: (term: string) => boolean): string {
  const kept = query.split(/(\s+)/).filter((part) => {
    const terms = indexTerms(part);
    return terms.length === 0 || !terms.every(isCommon);
  });
  const text = kept.join('').replace(/\s+/g, ' ').trim();
  // A question of common words only keeps them all: something must be embedded.
  return text.length > 0 ? text : query;
}
