import stem from 'wink-porter2-stemmer';
import { IRREGULAR_BASES } from './irregular-forms';
import { STOP_WORDS } from './stop-words';

/**
 * The terms history search indexes and queries by: lowercased words, English stop words dropped,
 * each reduced to its stem (Porter2, plus the irregular forms suffix stripping cannot reach: "went"
 * and "goes" are "go"). The index and the query use these functions, on PostgreSQL, on PGlite and
 * for rows sealed at rest (whose terms are hashed), so all three match the same way.
 */

const WORD = /[\p{L}\p{N}]+/gu;
/** Longer tokens are pasted data (hashes, base64), not words: kept whole, never stemmed. */
const MAX_STEMMED_CHARS = 30;

/** An irregular form's term is its base word's stem, so "chose" meets "choosing". */
const IRREGULAR_TERMS = new Map([...IRREGULAR_BASES].map(([form, base]) => [form, stem(base)]));

/** One lowercased word's term: its irregular base's stem, or its own; words with digits and long tokens as they are. */
function termOf(word: string): string {
  const irregular = IRREGULAR_TERMS.get(word);
  if (irregular !== undefined) return irregular;
  if (word.length > MAX_STEMMED_CHARS || /\d/.test(word)) return word;
  return stem(word);
}

/** Every term of `text` in order, repeats kept (how often a term occurs in an entry weighs in its ranking). */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    if (!STOP_WORDS.has(word)) out.push(termOf(word));
  }
  return out;
}

/** The distinct terms of a query, in order (none for a query of stop words only: they are not indexed). */
export function queryTerms(query: string): string[] {
  return [...new Set(indexTerms(query))];
}
