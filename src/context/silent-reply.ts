/**
 * The silent-reply token (OpenClaw's silent housekeeping): a reply that is just `NO_REPLY` is not delivered.
 */

/** The token a silent turn (e.g. the memory flush) answers with. */
export const SILENT_REPLY_TOKEN = 'NO_REPLY';

/** True when the whole payload, trimmed, is the token, in any case (`NO_REPLY`, `no_reply`). */
export function isSilentReply(text: string | undefined | null): boolean {
  return typeof text === 'string' && text.trim().toUpperCase() === SILENT_REPLY_TOKEN;
}

/**
 * True when a streamed draft must be held back: it begins with the token (followed by nothing or a
 * non-word character), or is so far a prefix of it (`NO_RE…`), so partial silent output never leaks.
 */
export function isSilentReplyPrefix(partial: string | undefined | null): boolean {
  if (typeof partial !== 'string') return false;
  const draft = partial.trimStart().toUpperCase();
  if (draft.length === 0) return false;
  if (draft.length <= SILENT_REPLY_TOKEN.length) return SILENT_REPLY_TOKEN.startsWith(draft);
  return draft.startsWith(SILENT_REPLY_TOKEN) && !/[A-Z0-9_]/.test(draft[SILENT_REPLY_TOKEN.length]);
}
