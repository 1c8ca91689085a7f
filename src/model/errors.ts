/**
 * Typed model-call errors and `classifyModelError`, which maps whatever the SDK or fetch threw to
 * one of them. Classification uses the HTTP status, the headers and the provider's error `type`;
 * message text is read only where no structured field exists (the overflow wording of a 400).
 */
import Anthropic from '@anthropic-ai/sdk';
import { isContextOverflowError } from '../context/is-context-overflow-error';
import { parseRetryAfterMs, type HeaderSource } from './retry-after';

/** Base of every model-call error: `retryable` says whether trying again later can succeed. */
export abstract class ModelError extends Error {
  abstract readonly retryable: boolean;
  /** HTTP status when the provider answered; undefined for transport failures. */
  readonly status: number | undefined;
  /** The provider's own error text, verbatim. */
  readonly providerMessage: string | undefined;

  constructor(
    message: string,
    fields: { status?: number | undefined; providerMessage?: string | undefined; cause?: unknown },
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.status = fields.status;
    this.providerMessage = fields.providerMessage;
  }
}

interface HttpFields {
  status?: number | undefined;
  providerMessage?: string | undefined;
  /** From `retry-after-ms` / `retry-after`; undefined when the provider gave none. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

function waitNote(retryAfterMs: number | undefined): string {
  return retryAfterMs === undefined ? '' : `; retry after ${retryAfterMs} ms`;
}

/** 429: too many requests or tokens per minute. Retryable, after `retryAfterMs` when given. */
export class ModelRateLimitedError extends ModelError {
  readonly retryable = true;
  readonly retryAfterMs: number | undefined;
  constructor(fields: HttpFields) {
    super(
      `Model API rate limit (${fields.status ?? 429}): ${fields.providerMessage ?? 'rate limited'}${waitNote(fields.retryAfterMs)}`,
      fields,
    );
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/** 529 / `overloaded_error`: the provider is temporarily out of capacity. Retryable. */
export class ModelOverloadedError extends ModelError {
  readonly retryable = true;
  readonly retryAfterMs: number | undefined;
  constructor(fields: HttpFields) {
    super(
      `Model API overloaded (${fields.status ?? 529}): ${fields.providerMessage ?? 'overloaded'}${waitNote(fields.retryAfterMs)}`,
      fields,
    );
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/** 5xx (and 409, the API's lock conflict): a provider-side failure. Retryable. */
export class ModelServerError extends ModelError {
  readonly retryable = true;
  readonly retryAfterMs: number | undefined;
  constructor(fields: HttpFields) {
    super(
      `Model API server error (${fields.status ?? 'no status'}): ${fields.providerMessage ?? 'server error'}${waitNote(fields.retryAfterMs)}`,
      fields,
    );
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/** The request timed out (client timeout, connect timeout or HTTP 408). Retryable. */
export class ModelTimeoutError extends ModelError {
  readonly retryable = true;
  constructor(fields: HttpFields = {}) {
    super(`Model API request timed out${fields.providerMessage ? `: ${fields.providerMessage}` : ''}`, fields);
  }
}

/**
 * The connection could not be made or was reset before a response started. Retryable. With
 * `endpoint` (the address and the setting that names it) the message says where, so a mistyped
 * URL can be fixed from one line: `model unreachable at http://127.0.0.1:9 (ANTHROPIC_BASE_URL): …`.
 */
export class ModelConnectionError extends ModelError {
  readonly retryable = true;
  readonly endpoint: string | undefined;
  constructor(fields: HttpFields & { endpoint?: string } = {}) {
    const why = fields.providerMessage ?? 'connection error';
    super(
      fields.endpoint ? `model unreachable at ${fields.endpoint}: ${why}` : `Model API connection failed: ${why}`,
      fields,
    );
    this.endpoint = fields.endpoint;
  }

  /** The same failure, naming where the client tried to connect. */
  at(endpoint: string): ModelConnectionError {
    return new ModelConnectionError({
      status: this.status,
      providerMessage: this.providerMessage,
      cause: this.cause,
      endpoint,
    });
  }
}

/** The response was cut off mid-body or mid-stream: never treated as a partial success. Retryable. */
export class ModelTruncatedResponseError extends ModelError {
  readonly retryable = true;
  constructor(fields: HttpFields = {}) {
    super(
      `Model API response was cut off before it completed: ${fields.providerMessage ?? 'connection closed'}`,
      fields,
    );
  }
}

/** The prompt exceeds the model's context window. Not retryable as is: compact, then retry the turn once. */
export class ContextOverflowError extends ModelError {
  readonly retryable = false;
  /** Prompt size the provider counted, when its message says. */
  readonly promptTokens: number | undefined;
  /** The provider's limit, when its message says. */
  readonly maxTokens: number | undefined;
  constructor(fields: HttpFields) {
    super(
      `Context overflow: the prompt does not fit the model's context window (${fields.providerMessage ?? 'no detail'}). Compact the session and retry.`,
      fields,
    );
    const parsed = parseOverflowTokens(fields.providerMessage ?? '');
    this.promptTokens = parsed.promptTokens;
    this.maxTokens = parsed.maxTokens;
  }
}

/** A 4xx other than overflow, auth and rate limit: the request itself is wrong. Not retryable. */
export class ModelRequestInvalidError extends ModelError {
  readonly retryable = false;
  constructor(fields: HttpFields) {
    const fix =
      fields.status === 404
        ? 'Check the model name and the base URL.'
        : 'Check the request (model, messages, tools, max tokens).';
    super(
      `Model API rejected the request (${fields.status ?? 'no status'}): ${fields.providerMessage ?? 'invalid request'}. ${fix}`,
      fields,
    );
  }
}

/** What to do about a rejected credential when calling Anthropic. */
export const ANTHROPIC_AUTH_FIX =
  'Set ANTHROPIC_API_KEY to a valid API key, or ANTHROPIC_BASE_URL to the endpoint you meant to call.';

/** 401/403: the credentials were rejected. Not retryable; the message says how to fix it. */
export class ModelAuthError extends ModelError {
  readonly retryable = false;
  constructor(fields: HttpFields & { fix?: string }) {
    super(
      `Model API rejected the credentials (${fields.status ?? 'no status'}): ${fields.providerMessage ?? 'unauthorized'}. ${fields.fix ?? ANTHROPIC_AUTH_FIX}`,
      fields,
    );
  }
}

/** The caller aborted the call (activity cancelled or worker shutting down). Retryable: a shutdown is not the request's fault. */
export class ModelCallAbortedError extends ModelError {
  readonly retryable = true;
  constructor(fields: HttpFields = {}) {
    super('Model API call was aborted by the caller', fields);
  }
}

/** Anything not recognised; kept retryable because the attempt count is capped by the activity's policy. */
export class ModelUnexpectedError extends ModelError {
  readonly retryable = true;
  constructor(fields: HttpFields) {
    super(`Unexpected model call failure: ${fields.providerMessage ?? 'unknown error'}`, fields);
  }
}

/**
 * Token counts from an overflow message, when present.
 *
 * @example parseOverflowTokens('prompt is too long: 212345 tokens > 200000 maximum') // { promptTokens: 212345, maxTokens: 200000 }
 * @example parseOverflowTokens('input length and `max_tokens` exceed context limit: 27661 + 4096 > 30000, …')
 *   // { promptTokens: 27661, maxTokens: 30000 } (the prompt alone: the reply's room is Keel's to size)
 * @example parseOverflowTokens("… is 4096 tokens. However, you requested 4751 tokens (4655 in the messages, 96 in the completion)")
 *   // { promptTokens: 4655, maxTokens: 4096 } ("you requested 4751" alone counts max_tokens, so it is not read)
 */
export function parseOverflowTokens(message: string): {
  promptTokens?: number | undefined;
  maxTokens?: number | undefined;
} {
  const num = (s: string | undefined): number | undefined =>
    s === undefined ? undefined : Number(s.replace(/,/g, ''));
  const withReply = /(\d[\d,]*)\s*\+\s*\d[\d,]*\s*>\s*(\d[\d,]*)/.exec(message);
  if (withReply) return { promptTokens: num(withReply[1]), maxTokens: num(withReply[2]) };
  const anthropic = /(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)/i.exec(message);
  if (anthropic) return { promptTokens: num(anthropic[1]), maxTokens: num(anthropic[2]) };
  const max = /maximum context length is (\d[\d,]*) tokens/i.exec(message);
  if (!max) return {};
  // "you requested N tokens (P in the messages, C in the completion)": N counts max_tokens; P is the prompt.
  const inMessages = /\((\d[\d,]*) in the messages/i.exec(message);
  if (inMessages) return { promptTokens: num(inMessages[1]), maxTokens: num(max[1]) };
  const prompt = /(?:resulted in|you have) (\d[\d,]*) tokens/i.exec(message);
  return prompt ? { promptTokens: num(prompt[1]), maxTokens: num(max[1]) } : { maxTokens: num(max[1]) };
}

/** A provider HTTP failure, however the client obtained it. */
export interface HttpFailure {
  /** Undefined for an error event inside a stream (its `errorType` still says what happened). */
  status: number | undefined;
  headers?: HeaderSource | null | undefined;
  /** The provider's error `type` (`rate_limit_error`, `overloaded_error`, …) when its body had one. */
  errorType?: string | null | undefined;
  /** A machine-readable code from the body (OpenAI `error.code`, e.g. `context_length_exceeded`). */
  errorCode?: string | null | undefined;
  providerMessage: string | undefined;
  cause?: unknown;
  /** Text for `ModelAuthError` naming this provider's settings; default `ANTHROPIC_AUTH_FIX`. */
  authFix?: string;
}

/** Maps an HTTP failure (status first, then the body's error type) to a typed error. */
export function classifyHttpFailure(failure: HttpFailure): ModelError {
  const { status, errorType, providerMessage, cause } = failure;
  const fields: HttpFields = { status, providerMessage, cause, retryAfterMs: parseRetryAfterMs(failure.headers) };
  if (status === 429 || errorType === 'rate_limit_error') return new ModelRateLimitedError(fields);
  if (status === 529 || errorType === 'overloaded_error') return new ModelOverloadedError(fields);
  if (status === 401 || status === 403 || errorType === 'authentication_error' || errorType === 'permission_error') {
    return new ModelAuthError({ ...fields, ...(failure.authFix ? { fix: failure.authFix } : {}) });
  }
  if (status === 408) return new ModelTimeoutError(fields);
  if (
    (status === undefined || (status >= 400 && status < 500)) &&
    isContextOverflowError({ status, message: providerMessage, type: errorType, code: failure.errorCode })
  ) {
    return new ContextOverflowError(fields);
  }
  // An error event inside a stream has no status; unless it blames the request it is the provider's.
  const providerSide = status === undefined ? errorType !== 'invalid_request_error' : status >= 500 || status === 409;
  if (providerSide || errorType === 'api_error') return new ModelServerError(fields);
  return new ModelRequestInvalidError(fields);
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
]);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** The `code` of an error or of any error in its `cause` chain. */
function causeCodes(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

function messageOf(err: unknown): string {
  const message = err !== null && typeof err === 'object' ? (err as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(err);
}

/**
 * Maps anything a model call threw to a `ModelError`: SDK `APIError`s by status, headers and body
 * type; SDK connection/timeout/abort errors; fetch failures by their cause codes; undici's
 * `terminated` (a body cut mid-way) to `ModelTruncatedResponseError`. A `ModelError` is returned
 * unchanged; anything else becomes `ModelUnexpectedError`.
 */
export function classifyModelError(err: unknown): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof Anthropic.APIUserAbortError) return new ModelCallAbortedError({ cause: err });
  if (err instanceof Anthropic.APIConnectionTimeoutError)
    return new ModelTimeoutError({ providerMessage: err.message, cause: err });
  if (err instanceof Anthropic.APIConnectionError) return classifyTransportError(err.cause ?? err, err);
  if (err instanceof Anthropic.APIError) {
    return classifyHttpFailure({
      status: err.status,
      headers: err.headers,
      errorType: err.type,
      errorCode: err.errorCode,
      providerMessage: err.apiMessage ?? err.message,
      cause: err,
    });
  }
  // A non-API SDK error wraps what broke the stream as its cause, or (mid-stream) only as text:
  // `TypeError: terminated` is undici's word for a body cut mid-way, and no structured field exists.
  if (err instanceof Anthropic.AnthropicError && err.cause !== undefined) return classifyTransportError(err.cause, err);
  if (err instanceof Anthropic.AnthropicError && /\bterminated\b/.test(err.message)) {
    return new ModelTruncatedResponseError({ providerMessage: err.message, cause: err });
  }
  return classifyTransportError(err, err);
}

function classifyTransportError(err: unknown, original: unknown): ModelError {
  const fields = { providerMessage: messageOf(err), cause: original };
  // Errors from Node's fetch or AbortSignal are not always `instanceof` this realm's classes: read names.
  const name = err !== null && typeof err === 'object' ? String((err as { name?: unknown }).name ?? '') : '';
  if (name === 'AbortError') return new ModelCallAbortedError(fields);
  if (name === 'TimeoutError') return new ModelTimeoutError(fields);
  const codes = causeCodes(err);
  if (codes.some((c) => TIMEOUT_CODES.has(c))) return new ModelTimeoutError(fields);
  // undici reports a body that stopped mid-way as TypeError('terminated').
  if (name === 'TypeError' && fields.providerMessage === 'terminated') return new ModelTruncatedResponseError(fields);
  if (
    codes.some((c) => CONNECTION_CODES.has(c)) ||
    (name === 'TypeError' && fields.providerMessage === 'fetch failed')
  ) {
    return new ModelConnectionError({ ...fields, providerMessage: [messageOf(err), ...codes].join(' ') });
  }
  return new ModelUnexpectedError(fields);
}
