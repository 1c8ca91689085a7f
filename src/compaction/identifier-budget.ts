/**
 * How many protected identifiers a summary may carry. Identifiers are kept verbatim past the
 * summary's text cap (OpenClaw's identifier policy), but not without bound: a long session mentions
 * tens of thousands (order numbers, call ids, paths), and a summary that lists them all can outgrow
 * the context window, so every later turn compacts again and the session can no longer fit.
 */
import { DEFAULTS } from '../config/defaults';

/**
 * Characters of identifier listing a summary may hold: `maxIdentifierWindowShare` of the window, at
 * the density of the densest identifiers (`identifierCharsPerToken`, not prose's 4 characters a token).
 */
export function identifierCharBudget(contextWindowTokens: number): number {
  return Math.max(
    1_000,
    Math.floor(contextWindowTokens * DEFAULTS.maxIdentifierWindowShare * DEFAULTS.identifierCharsPerToken),
  );
}

/** What fits: the newest identifiers, in their order, and how many older ones were left out. */
export interface BoundedIdentifiers {
  readonly kept: string[];
  readonly leftOut: number;
}

/**
 * The newest identifiers (the end of `ids`, which lists them oldest first) whose listing, one
 * `- id` line each, fits `maxChars`.
 */
export function newestIdentifiersWithin(ids: readonly string[], maxChars: number): BoundedIdentifiers {
  let used = 0;
  let first = ids.length;
  while (first > 0 && used + ids[first - 1]!.length + 3 <= maxChars) used += ids[--first]!.length + 3;
  return { kept: ids.slice(first), leftOut: first };
}

/**
 * The line a summary's identifier section carries when some were left out. It is not a `- ` bullet,
 * so the next compaction does not read it as an identifier.
 */
export function leftOutNote(count: number): string {
  return `(${count} ${LEFT_OUT_WORDS}; the transcript keeps them, and history search finds them)`;
}

const LEFT_OUT_WORDS = 'older identifiers left out to fit the context window';
const LEFT_OUT_COUNT = new RegExp(`^\\((\\d+) ${LEFT_OUT_WORDS}`, 'm');

/** The count a `leftOutNote` in `text` gives (0 without one). */
export function leftOutCountIn(text: string): number {
  return Number(LEFT_OUT_COUNT.exec(text)?.[1] ?? 0);
}
