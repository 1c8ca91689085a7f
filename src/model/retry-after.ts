/**
 * Reads how long a provider asked us to wait before retrying, from response headers.
 */
import { DEFAULTS } from '../config/defaults';

/**
 * Longest wait Keel honours from a provider header (Keel): a bogus or huge value must not park a
 * turn for hours; past this the activity's own backoff and attempt cap decide.
 */
export const MAX_RETRY_AFTER_MS = DEFAULTS.maxRetryAfterMs;

/** Anything that can look up a header by name: fetch `Headers`, or a plain record. */
export type HeaderSource =
  { get(name: string): string | null | undefined } | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null | undefined }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Milliseconds to wait, from `retry-after-ms` (milliseconds) or else `retry-after` (seconds, or an
 * HTTP date relative to `now`). Undefined when absent, unparseable, or not in the future; capped at
 * `MAX_RETRY_AFTER_MS`.
 *
 * @example parseRetryAfterMs(new Headers({ 'retry-after': '2' })) // 2000
 */
export function parseRetryAfterMs(
  headers: HeaderSource | undefined | null,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = header(headers, 'retry-after-ms');
  let wait = ms !== undefined && ms.trim() !== '' ? Number(ms) : undefined;
  if (wait === undefined || !Number.isFinite(wait)) {
    const value = header(headers, 'retry-after')?.trim();
    if (!value) return undefined;
    wait = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  }
  if (!Number.isFinite(wait) || wait <= 0) return undefined;
  return Math.min(Math.round(wait), MAX_RETRY_AFTER_MS);
}
