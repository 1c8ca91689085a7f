/**
 * The token limits the real APIs enforce on every call, worded and answered as they answer them:
 * `max_tokens` present and within the model's output limit (Anthropic), the prompt within the
 * context window, and the prompt plus `max_tokens` within it too (the window holds the reply).
 */
import type { FakeErrorStep } from './fake-anthropic-steps';

/** The real Anthropic window for current models. */
export const FAKE_DEFAULT_TOKEN_LIMIT = 200_000;

/** The output limit of a model the table below does not name (the current Sonnet and Haiku's). */
const FAKE_DEFAULT_MAX_OUTPUT_TOKENS = 64_000;

/** Anthropic's output limits by model id prefix, most specific first (its models overview). */
const MAX_OUTPUT_TOKENS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ['claude-opus-4-5', 64_000],
  ['claude-opus-4', 32_000],
  ['claude-3-5-', 8_192],
  ['claude-3-haiku', 4_096],
  ['claude-3-opus', 4_096],
];

/** The most `max_tokens` a request for `model` may ask (Anthropic's table; unknown ids: the default). */
export function fakeMaxOutputTokens(model: string | undefined): number {
  return MAX_OUTPUT_TOKENS.find(([prefix]) => model?.startsWith(prefix))?.[1] ?? FAKE_DEFAULT_MAX_OUTPUT_TOKENS;
}

/** Anthropic Messages API: the 400 message for a missing or out-of-range `max_tokens`, or undefined. */
export function anthropicMaxTokensProblem(
  body: { readonly model?: string; readonly max_tokens?: unknown },
  outputLimit: number,
): string | undefined {
  const maxTokens = body.max_tokens;
  if (maxTokens === undefined) return 'max_tokens: Field required';
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens))
    return 'max_tokens: Input should be a valid integer';
  if (maxTokens < 1) return 'max_tokens: Input should be greater than or equal to 1';
  if (maxTokens > outputLimit)
    return `max_tokens: ${maxTokens} > ${outputLimit}, which is the maximum allowed number of output tokens for ${body.model ?? ''}`;
  return undefined;
}

/** The provider's answer to a prompt longer than the window (Anthropic's wording, or OpenAI's context_length_exceeded). */
export function promptOverflowStep(tokens: number, limit: number, api: 'anthropic' | 'openai'): FakeErrorStep {
  if (api === 'anthropic')
    return {
      kind: 'error',
      status: 400,
      errorType: 'invalid_request_error',
      message: `prompt is too long: ${tokens} tokens > ${limit} maximum`,
    };
  return {
    kind: 'error',
    status: 400,
    errorType: 'invalid_request_error',
    message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
    code: 'context_length_exceeded',
  };
}

/** The provider's answer to a prompt that fits but leaves no room for `max_tokens` (each in its own wording). */
export function replyOverflowStep(
  tokens: number,
  maxTokens: number,
  limit: number,
  api: 'anthropic' | 'openai',
): FakeErrorStep {
  if (api === 'anthropic')
    return {
      kind: 'error',
      status: 400,
      errorType: 'invalid_request_error',
      message: `input length and \`max_tokens\` exceed context limit: ${tokens} + ${maxTokens} > ${limit}, decrease input length or \`max_tokens\` and try again`,
    };
  return {
    kind: 'error',
    status: 400,
    errorType: 'invalid_request_error',
    message: `This model's maximum context length is ${limit} tokens. However, you requested ${tokens + maxTokens} tokens (${tokens} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
    code: 'context_length_exceeded',
  };
}
