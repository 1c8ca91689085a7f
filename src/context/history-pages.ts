/**
 * Pure pieces of recall (`history_search`, `history_expand`): the snippet shown around a match,
 * how many rendered entries fit one page's token budget, and the opaque cursor of the next page.
 */
import { tokensOfLength } from './length-tokens';

/** Characters of context a search result shows around its first match. */
export const SNIPPET_CHARS = 300;

/**
 * About `width` characters of `text` around the first occurrence of any of `words`
 * (case-insensitive), with `…` where it was cut; the start of the text when no word occurs.
 */
export function snippetAround(text: string, words: readonly string[], width = SNIPPET_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const lower = flat.toLowerCase();
  const hits = words.map((w) => lower.indexOf(w.toLowerCase())).filter((i) => i >= 0);
  const at = hits.length > 0 ? Math.min(...hits) : 0;
  const start = Math.max(0, Math.min(at - Math.floor(width / 3), flat.length - width));
  const end = Math.min(flat.length, start + width);
  return `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
}

/** Token cost of a rendered block as recall budgets it (about four characters a token). */
export function textTokens(text: string): number {
  return tokensOfLength(text.length);
}

/**
 * How many of `blocks` (in order) one page holds within `budgetTokens`. A page always takes at
 * least one block, cut to the budget when it alone is larger, so paging always advances.
 */
export function fillPage(blocks: readonly string[], budgetTokens: number): { texts: string[]; taken: number } {
  const texts: string[] = [];
  let used = 0;
  for (const block of blocks) {
    const cost = textTokens(block);
    if (texts.length > 0 && used + cost > budgetTokens) break;
    if (texts.length === 0 && cost > budgetTokens) {
      const keep = budgetTokens * 4;
      texts.push(`${block.slice(0, keep)}… [${block.length - keep} chars cut]`);
      return { texts, taken: 1 };
    }
    texts.push(block);
    used += cost;
  }
  return { texts, taken: texts.length };
}

/** Where the next page of an expansion starts: a session, the next seq, and the range's end (exclusive). */
export interface ExpandCursor {
  readonly sessionId: string;
  readonly fromSeq: number;
  readonly toSeq: number;
}

export function encodeCursor(cursor: ExpandCursor): string {
  return Buffer.from(JSON.stringify([cursor.sessionId, cursor.fromSeq, cursor.toSeq])).toString('base64url');
}

/** The cursor a previous page returned, or undefined when it is not one. */
export function decodeCursor(text: string): ExpandCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3) return undefined;
    const [sessionId, fromSeq, toSeq] = value as unknown[];
    if (typeof sessionId !== 'string' || !Number.isSafeInteger(fromSeq) || !Number.isSafeInteger(toSeq))
      return undefined;
    return { sessionId, fromSeq: fromSeq as number, toSeq: toSeq as number };
  } catch {
    return undefined;
  }
}
