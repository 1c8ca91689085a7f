import { sql, type RawBuilder } from 'kysely';
import type { AtRest } from './at-rest';
import type { TranscriptEntry } from '../context/types';
import { messageText } from '../compaction/serialize-for-summary';

/** Searchable text per entry is capped: recall needs the gist of a huge tool result, not all of it. */
const MAX_SEARCH_CHARS = 20_000;

/**
 * The text `history_search` matches an entry by: user and assistant text, tool-call names and
 * arguments, tool-result text (as the summarizer sees them), a compaction's summary; bounded.
 * Headers and custom data have none.
 */
export function entrySearchText(entry: TranscriptEntry): string {
  let text = '';
  if (entry.type === 'message') text = messageText(entry.message);
  else if (entry.type === 'custom_message') text = typeof entry.content === 'string' ? entry.content : entry.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  else if (entry.type === 'compaction' || entry.type === 'branch_summary') text = entry.summary;
  return text.slice(0, MAX_SEARCH_CHARS);
}

/** What history_search indexes an entry by: its plain text (a tsvector is made of it), or a sealed entry's blind-index terms. */
export function searchValues(atRest: AtRest, entry: TranscriptEntry): { searchText: string } | { searchTerms: string[] } {
  const text = entrySearchText(entry);
  const terms = atRest.index(text);
  return terms !== null ? { searchTerms: terms } : { searchText: text };
}

/**
 * The search columns of a new entry row, computed at insert time (the index grows with the
 * transcript, never rescans): a `simple` tsvector of the plain text, or, when the row is sealed,
 * the blind-index HMACs of its words and no tsvector (the database never sees the words).
 */
export function searchColumns(atRest: AtRest, entry: TranscriptEntry): { search_vector: RawBuilder<string> | null; search_terms: string[] | null } {
  return searchColumnsOf(searchValues(atRest, entry));
}

/** The search columns from `searchValues` (also from a compiled-once statement's values, which carry one of the two keys). */
export function searchColumnsOf(values: { searchText: string } | { searchTerms: string[] }): { search_vector: RawBuilder<string> | null; search_terms: string[] | null } {
  if ('searchTerms' in values) return { search_vector: null, search_terms: values.searchTerms };
  return { search_vector: sql<string>`to_tsvector('simple', ${values.searchText})`, search_terms: null };
}
