/**
 * Storable text: the one rule Keel applies before anything is persisted.
 *
 * PostgreSQL cannot store NUL (U+0000) in `text` or `jsonb`, and `jsonb` rejects a lone UTF-16
 * surrogate (a high surrogate not followed by a low one, or a low one not preceded by a high one).
 * Such a write fails the same way on every retry, so Keel replaces each of them with U+FFFD (the
 * Unicode replacement character) before writing. Everything else, including valid surrogate pairs
 * (emoji), is kept as is. The functions here are pure and return their input unchanged (the same
 * string, the same object) when nothing needs replacing.
 */

/** The replacement for an unstorable code unit. */
export const REPLACEMENT_CHARACTER = '\uFFFD';

// NUL, a high surrogate without a following low one, or a low surrogate without a preceding high one.
const UNSTORABLE_SOURCE = '\\u0000|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]';
// Non-global for `test` (a global regex keeps lastIndex between calls).
const UNSTORABLE = new RegExp(UNSTORABLE_SOURCE);
const UNSTORABLE_ALL = new RegExp(UNSTORABLE_SOURCE, 'g');

/**
 * The text with NUL and lone surrogates replaced by U+FFFD; the same string when it has none.
 * @example storableText('a\u0000b\ud800') === 'a\uFFFDb\uFFFD'
 */
export function storableText(s: string): string {
  if (!UNSTORABLE.test(s)) return s;
  return s.replace(UNSTORABLE_ALL, REPLACEMENT_CHARACTER);
}

/**
 * A JSON-shaped value with {@link storableText} applied to every string in it, object keys included.
 * Returns the same value when nothing changed, and copies only the arrays and objects on the path
 * to a changed string. Non-plain values (numbers, booleans, null, Date …) pass through untouched.
 * When two keys of one object become equal after replacement, the later one wins (as JSON.parse would).
 */
export function storableJson<T>(value: T): T {
  return walk(value) as T;
}

function walk(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i]);
      if (next !== value[i]) (copy ??= value.slice())[i] = next;
    }
    return copy ?? value;
  }
  if (isPlainObject(value)) {
    let changed = false;
    const entries: Array<[string, unknown]> = [];
    for (const [key, v] of Object.entries(value)) {
      const k = storableText(key);
      const next = walk(v);
      if (k !== key || next !== v) changed = true;
      entries.push([k, next]);
    }
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** What {@link findUnstorable} found in a text. */
export interface UnstorableReport {
  readonly nul: number;
  readonly loneSurrogates: number;
  /** UTF-16 index of the first unstorable code unit. */
  readonly firstIndex: number;
}

/** Counts NUL and lone surrogates in a text (for reports and error messages); undefined when it has none. */
export function findUnstorable(s: string): UnstorableReport | undefined {
  if (!UNSTORABLE.test(s)) return undefined;
  let nul = 0;
  let loneSurrogates = 0;
  let firstIndex = -1;
  for (const m of s.matchAll(UNSTORABLE_ALL)) {
    if (firstIndex < 0) firstIndex = m.index!;
    if (m[0] === '\u0000') nul++;
    else loneSurrogates++;
  }
  return { nul, loneSurrogates, firstIndex };
}

// JSON.stringify writes NUL and lone surrogates as \u escapes, which jsonb rejects just the same.
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i;

/** Serialized JSON whose strings are made storable; the same text when it has nothing to replace. */
export function storableJsonText(json: string): string {
  if (!UNSTORABLE_ESCAPE.test(json) && !UNSTORABLE.test(json)) return json;
  return JSON.stringify(storableJson(JSON.parse(json)));
}
