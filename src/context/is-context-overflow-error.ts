/**
 * Classifies a provider error as "the prompt does not fit the model's context window", the signal
 * for overflow compaction (then retry the turn once). Rate limits and overload are never overflow,
 * even when their text mentions tokens: those are transient and retried.
 */

/** Wordings providers use for a prompt that exceeds the context window (the wordings OpenClaw classifies as overflow). */
const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /request_too_large/,
  /context length exceeded/,
  /context_length_exceeded/,
  /prompt is too long/,
  // Anthropic, when the prompt fits but the prompt plus max_tokens does not (models since Claude 3.7).
  /exceed context limit/,
  /input exceeds the maximum number of tokens/,
  /input token count exceeds the maximum number of input tokens/,
  /input is too long for the model/,
  /maximum context length is \d[\d,]* tokens/,
  /reduce the length of the messages/,
  /too many tokens/,
  /exceeds the available context size/,
  /model_context_window_exceeded/,
];

/** Wordings of rate limits and overload: transient, retryable, never overflow. */
const TRANSIENT_PATTERNS: readonly RegExp[] = [
  /rate[ _-]?limit/,
  /too many requests/,
  /tokens per minute/,
  /tokens_per_minute/,
  /quota/,
  /overloaded/,
];

/** A 413 counts as overflow only when its text is about the prompt's size. */
const PROMPT_SIZE_PATTERN = /too large|too long|exceed|size|tokens|length/;

const TRANSIENT_STATUSES = new Set([429, 529]);

/**
 * True when `error` (an Error, an SDK error, a `{message, code, status}` object or a string) says the request's prompt is larger than the model's context window: any of
 * the known wordings (case-insensitive) in its message, code, type or nested provider body, or an
 * HTTP 413 whose text is about size. False for rate limits and overload (text or status 429/529).
 *
 * @example
 *   isContextOverflowError(new Error('400 prompt is too long: 212000 tokens > 200000 maximum')) // true
 *   isContextOverflowError({ status: 429, message: 'Too many tokens per minute' })              // false
 */
export function isContextOverflowError(error: unknown): boolean {
  const { texts, status } = describe(error);
  if (status !== undefined && TRANSIENT_STATUSES.has(status)) return false;
  const text = texts.join('\n').toLowerCase();
  if (TRANSIENT_PATTERNS.some((p) => p.test(text))) return false;
  if (OVERFLOW_PATTERNS.some((p) => p.test(text))) return true;
  if (/contextoverflowerror/.test(text)) return true;
  const is413 = status === 413 || /(^|\D)413(\D|$)/.test(text.slice(0, 4));
  return is413 && PROMPT_SIZE_PATTERN.test(text);
}

/** Collects every text field and the HTTP status of whatever was thrown. */
function describe(error: unknown, depth = 0): { texts: string[]; status?: number } {
  if (typeof error === 'string') return { texts: [error] };
  if (error === null || typeof error !== 'object' || depth > 3) return { texts: [] };
  const record = error as Record<string, unknown>;
  const texts: string[] = [];
  for (const key of ['name', 'message', 'apiMessage', 'code', 'type', 'errorCode'] as const) {
    const value = record[key];
    if (typeof value === 'string') texts.push(value);
  }
  let status = toStatus(record.status) ?? toStatus(record.statusCode);
  // Provider bodies nest the detail: Anthropic `{type:'error', error:{type, message}}`, OpenAI `{error:{message, code}}`.
  for (const nested of [record.error, record.cause]) {
    const inner = describe(nested, depth + 1);
    texts.push(...inner.texts);
    status ??= inner.status;
  }
  return status === undefined ? { texts } : { texts, status };
}

function toStatus(value: unknown): number | undefined {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
}
