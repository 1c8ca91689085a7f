import { sql, type RawBuilder } from 'kysely';
import type { AtRest } from '../security/at-rest';
import { isToolCallBlock, type AgentMessage, type TranscriptEntry } from '../context/types';
import { messageText } from '../compaction/serialize-for-summary';
import { indexTerms } from '../text/search-terms';
import { isRecallTool } from '../tools/recall-tools';

/** Searchable text per entry is capped: recall needs the gist of a huge tool result, not all of it. */
const MAX_SEARCH_CHARS = 20_000;

/**
 * The text `history_search` matches an entry by: user and assistant text, tool-call names and
 * arguments, tool-result text, a compaction's summary; bounded. Headers and custom data have none,
 * and neither have the calls and results of the recall tools: they only echo what they found.
 */
export function entrySearchText(entry: TranscriptEntry): string {
  let text = '';
  if (entry.type === 'message') text = messageSearchText(entry.message);
  else if (entry.type === 'custom_message')
    text =
      typeof entry.content === 'string'
        ? entry.content
        : entry.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  else if (entry.type === 'compaction' || entry.type === 'branch_summary') text = entry.summary;
  return text.slice(0, MAX_SEARCH_CHARS);
}

/** A message's text as the summarizer reads it, less the recall tools' calls and results. */
function messageSearchText(message: AgentMessage): string {
  if (message.role === 'toolResult') return isRecallTool(message.toolName) ? '' : messageText(message);
  if (message.role !== 'assistant') return messageText(message);
  return messageText({
    ...message,
    content: message.content.filter((b) => !(isToolCallBlock(b) && isRecallTool(b.name))),
  });
}

/** True when an entry is a recall tool's echo: a call to one only, or its result. */
export function isRecallEcho(entry: TranscriptEntry): boolean {
  if (entry.type !== 'message') return false;
  const m = entry.message;
  if (m.role === 'toolResult') return isRecallTool(m.toolName);
  if (m.role !== 'assistant') return false;
  const calls = m.content.filter(isToolCallBlock);
  return (
    calls.length > 0 &&
    calls.every((c) => isRecallTool(c.name)) &&
    !m.content.some((b) => b.type === 'text' && b.text.trim().length > 0)
  );
}

/** The indexed form of an entry's text: its search terms, space separated (a tsvector is made of it). */
export function entryIndexText(entry: TranscriptEntry): string {
  return indexTerms(entrySearchText(entry)).join(' ');
}

/** What history_search indexes an entry by: its terms as text (a tsvector is made of it), or a sealed entry's blind-index hashes of its distinct terms. */
export function searchValues(
  atRest: AtRest,
  entry: TranscriptEntry,
): { searchText: string } | { searchTerms: string[] } {
  const terms = indexTerms(entrySearchText(entry));
  const sealed = atRest.indexTerms([...new Set(terms)]);
  return sealed !== null ? { searchTerms: sealed } : { searchText: terms.join(' ') };
}

/**
 * The search columns of a new entry row, computed at insert time (the index grows with the
 * transcript, never rescans): a `simple` tsvector of its search terms (stemmed already, so the
 * database only splits them), or, when the row is sealed, the blind-index HMACs of its terms and no
 * tsvector (the database never sees the words).
 */
export function searchColumns(
  atRest: AtRest,
  entry: TranscriptEntry,
): { search_vector: RawBuilder<string> | null; search_terms: string[] | null } {
  return searchColumnsOf(searchValues(atRest, entry));
}

/** The search columns from `searchValues` (also from a compiled-once statement's values, which carry one of the two keys). */
export function searchColumnsOf(values: { searchText: string } | { searchTerms: string[] }): {
  search_vector: RawBuilder<string> | null;
  search_terms: string[] | null;
} {
  if ('searchTerms' in values) return { search_vector: null, search_terms: values.searchTerms };
  return { search_vector: sql<string>`to_tsvector('simple', ${values.searchText})`, search_terms: null };
}
