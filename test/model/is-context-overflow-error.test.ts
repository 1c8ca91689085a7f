import Anthropic from '@anthropic-ai/sdk';
import { isContextOverflowError } from '../../src/context/is-context-overflow-error';

/** An SDK error as the SDK builds it from an HTTP response. */
function sdkError(status: number, type: string, message: string): Error {
  return Anthropic.APIError.generate(status, { type: 'error', error: { type, message } }, undefined, new Headers());
}

describe('isContextOverflowError', () => {
  describe('recognises every overflow wording, case-insensitively', () => {
    it.each([
      ['request_too_large', 'request_too_large'],
      ['context length exceeded', 'Context length exceeded'],
      ['context_length_exceeded', 'error code: context_length_exceeded'],
      ['prompt is too long', 'prompt is too long: 212345 tokens > 200000 maximum'],
      [
        'exceed context limit (the prompt plus max_tokens)',
        'input length and `max_tokens` exceed context limit: 27661 + 4096 > 30000, decrease input length or `max_tokens` and try again',
      ],
      ['input exceeds the maximum number of tokens', 'Input exceeds the maximum number of tokens allowed'],
      [
        'input token count exceeds the maximum number of input tokens',
        'The input token count exceeds the maximum number of input tokens allowed (1048576).',
      ],
      ['input is too long for the model', 'Input is too long for the model'],
      ['ollama error: context length exceeded', 'ollama error: context length exceeded'],
      [
        'maximum context length is N tokens',
        "This model's maximum context length is 128000 tokens. However, you requested 130512 tokens.",
      ],
      ['reduce the length of the messages', 'Please reduce the length of the messages or completion.'],
      ['too many tokens', 'Too many tokens in the request'],
      ['exceeds the available context size', 'the request exceeds the available context size, try increasing it'],
      ['model_context_window_exceeded', 'stop_reason: model_context_window_exceeded'],
    ])('%s', (_wording, message) => {
      expect(isContextOverflowError(message)).toBe(true);
      expect(isContextOverflowError(new Error(message.toUpperCase()))).toBe(true);
      expect(isContextOverflowError({ message, code: 'x', status: 400 })).toBe(true);
    });
  });

  describe('accepts the shapes errors arrive in', () => {
    it.each<[string, unknown]>([
      [
        'an Anthropic SDK 400',
        sdkError(400, 'invalid_request_error', 'prompt is too long: 250000 tokens > 200000 maximum'),
      ],
      [
        'an Anthropic SDK 413 request_too_large',
        sdkError(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
      ],
      ['a code field', { code: 'context_length_exceeded', message: 'bad request' }],
      ['an OpenAI-style nested body', { status: 400, error: { message: 'x', code: 'context_length_exceeded' } }],
      ['a cause chain', new Error('turn failed', { cause: new Error('prompt is too long: 3 tokens > 2 maximum') })],
      ['HTTP 413 with a prompt-size message', { status: 413, message: 'Payload Too Large' }],
      ['a "413 ..." string with a size message', '413 Request Entity Too Large'],
    ])('true for %s', (_shape, error) => {
      expect(isContextOverflowError(error)).toBe(true);
    });
  });

  describe('rejects rate limits and overload even when they mention tokens', () => {
    it.each<[string, unknown]>([
      ['rate limit', 'Rate limit reached: too many tokens in the request'],
      ['too many requests', 'Too Many Requests'],
      ['tokens per minute', 'Request too large for model: limit 30000 tokens per minute; requested 45000'],
      ['quota', 'You exceeded your current quota: too many tokens'],
      ['overloaded', 'Overloaded: context length exceeded upstream'],
      ['status 429', { status: 429, message: 'prompt is too long for this minute' }],
      ['status 529', { status: 529, message: 'too many tokens' }],
      [
        'an SDK 429',
        sdkError(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'),
      ],
      ['an SDK 529', sdkError(529, 'overloaded_error', 'Overloaded')],
    ])('%s', (_wording, error) => {
      expect(isContextOverflowError(error)).toBe(false);
    });
  });

  describe('is false for other errors', () => {
    it.each<[string, unknown]>([
      ['a plain 400', sdkError(400, 'invalid_request_error', 'messages: roles must alternate')],
      ['a 413 without a size message', { status: 413, message: 'nope' }],
      ['a server error', { status: 500, message: 'Internal server error' }],
      ['undefined', undefined],
      ['null', null],
      ['a number', 42],
    ])('%s', (_what, error) => {
      expect(isContextOverflowError(error)).toBe(false);
    });
  });
});
