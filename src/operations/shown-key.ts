/** Longest session key echoed whole in messages; longer ones are cut (a pasted blob must not flood the terminal). */
const MAX_SHOWN = 80;

/** The key as messages echo it: whole when short, else its start, an ellipsis and its length. */
export function shownKey(key: string): string {
  return key.length <= MAX_SHOWN ? key : `${key.slice(0, MAX_SHOWN - 20)}… (${key.length} chars)`;
}

/** An id as messages show it: a pasted megabyte is cut. */
export function shownId(id: string): string {
  return id.length > 80 ? `${id.slice(0, 80)}… (${id.length} characters)` : id;
}
