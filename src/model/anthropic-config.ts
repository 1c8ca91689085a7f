/**
 * The Anthropic client's settings, validated once at the edge. The client never reads
 * `process.env`; whoever builds it passes this object (Keel's runtime builds it from `configFromEnv`).
 */
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';

/** Where the SDK sends requests when no base URL is configured (Anthropic's public API). */
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** Settings of `AnthropicModelClient`: key, base URL (default Anthropic's API) and timeouts. */
export const anthropicClientConfigSchema = z.object({
  apiKey: z.string().min(1, 'ANTHROPIC_API_KEY is empty: set it to your Anthropic API key'),
  baseURL: z.url('ANTHROPIC_BASE_URL must be an http(s) URL').default(DEFAULT_ANTHROPIC_BASE_URL),
  /**
   * The response must start (status and headers) within this: the SDK's `timeout` stops at the
   * headers and never bounds the streamed body. A timeout is retryable; Temporal retries it.
   */
  timeoutMs: z.number().int().positive().default(DEFAULTS.modelRequestTimeoutMs),
  /** Once started, the stream fails after this long without an event; a stream that keeps sending is never cut. */
  idleTimeoutMs: z.number().int().positive().default(DEFAULTS.modelStreamIdleTimeoutMs),
  /** The setting `baseURL` came from, named when the endpoint cannot be reached. */
  baseURLSetting: z.string().default('ANTHROPIC_BASE_URL'),
});

/** What callers pass in (defaults not yet applied). */
export type AnthropicClientConfigInput = z.input<typeof anthropicClientConfigSchema>;
/** A validated config, defaults applied. */
export type AnthropicClientConfig = z.output<typeof anthropicClientConfigSchema>;

/** The Anthropic client configuration is missing or malformed; `field` names the setting to fix. */
export class AnthropicConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`Invalid Anthropic configuration (${field}): ${message}`);
    this.name = 'AnthropicConfigError';
  }
}

const ENV_NAMES: Record<string, string> = {
  apiKey: 'ANTHROPIC_API_KEY',
  baseURL: 'ANTHROPIC_BASE_URL',
  timeoutMs: 'timeoutMs',
  idleTimeoutMs: 'idleTimeoutMs',
};

/** Validates a config, applying defaults; throws `AnthropicConfigError` naming the variable to set. */
export function parseAnthropicClientConfig(input: unknown): AnthropicClientConfig {
  const parsed = anthropicClientConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const key = String(issue.path[0] ?? 'config');
  const message =
    key === 'apiKey' && issue.code === 'invalid_type'
      ? 'ANTHROPIC_API_KEY is not set: set it to your Anthropic API key'
      : issue.message;
  throw new AnthropicConfigError(ENV_NAMES[key] ?? key, message);
}
