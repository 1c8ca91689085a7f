import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import {
  ContextOverflowError,
  ModelAuthError,
  ModelCallAbortedError,
  ModelConnectionError,
  ModelOverloadedError,
  ModelRateLimitedError,
  ModelRequestInvalidError,
  ModelServerError,
  ModelTimeoutError,
  ModelTruncatedResponseError,
  ModelUnexpectedError,
  classifyHttpFailure,
  classifyModelError,
  parseOverflowTokens,
} from '../../src/model/errors';
import { MODEL_FAILURE_TYPES, toActivityFailure } from '../../src/model/failures';
import { MAX_RETRY_AFTER_MS, parseRetryAfterMs } from '../../src/model/retry-after';

function sdkError(status: number, type: string, message: string, headers: Record<string, string> = {}): Error {
  return Anthropic.APIError.generate(
    status,
    { type: 'error', error: { type, message } },
    undefined,
    new Headers(headers),
  );
}

function withCode(error: Error, code: string): Error {
  return Object.assign(error, { code });
}

describe('classifyModelError', () => {
  it.each<[string, unknown, new (...args: never[]) => Error]>([
    ['SDK 429', sdkError(429, 'rate_limit_error', 'slow down'), ModelRateLimitedError],
    ['SDK 529', sdkError(529, 'overloaded_error', 'Overloaded'), ModelOverloadedError],
    ['SDK 500', sdkError(500, 'api_error', 'Internal'), ModelServerError],
    ['SDK 503', sdkError(503, 'api_error', 'Unavailable'), ModelServerError],
    ['SDK 409 lock conflict', sdkError(409, 'api_error', 'conflict'), ModelServerError],
    ['SDK 408', sdkError(408, 'timeout_error', 'timeout'), ModelTimeoutError],
    [
      'SDK 400 overflow',
      sdkError(400, 'invalid_request_error', 'prompt is too long: 5 tokens > 4 maximum'),
      ContextOverflowError,
    ],
    [
      'SDK 413 request_too_large',
      sdkError(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
      ContextOverflowError,
    ],
    ['SDK 400 other', sdkError(400, 'invalid_request_error', 'max_tokens: must be positive'), ModelRequestInvalidError],
    ['SDK 404', sdkError(404, 'not_found_error', 'model: claude-nope'), ModelRequestInvalidError],
    ['SDK 401', sdkError(401, 'authentication_error', 'invalid x-api-key'), ModelAuthError],
    ['SDK 403', sdkError(403, 'permission_error', 'no access'), ModelAuthError],
    [
      'SDK stream error event (no status)',
      new Anthropic.APIError(
        undefined,
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        undefined,
        new Headers(),
      ),
      ModelOverloadedError,
    ],
    ['SDK connection timeout', new Anthropic.APIConnectionTimeoutError(), ModelTimeoutError],
    [
      'SDK connection error',
      new Anthropic.APIConnectionError({ cause: withCode(new Error('connect ECONNREFUSED'), 'ECONNREFUSED') }),
      ModelConnectionError,
    ],
    ['SDK user abort', new Anthropic.APIUserAbortError(), ModelCallAbortedError],
    ['SDK stream cut (terminated)', new Anthropic.AnthropicError('TypeError: terminated'), ModelTruncatedResponseError],
    [
      'fetch failed, refused',
      new TypeError('fetch failed', { cause: withCode(new Error('connect'), 'ECONNREFUSED') }),
      ModelConnectionError,
    ],
    [
      'fetch failed, connect timeout',
      new TypeError('fetch failed', { cause: withCode(new Error('t'), 'UND_ERR_CONNECT_TIMEOUT') }),
      ModelTimeoutError,
    ],
    ['fetch body cut', new TypeError('terminated'), ModelTruncatedResponseError],
    [
      'AbortSignal.timeout',
      new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      ModelTimeoutError,
    ],
    ['caller abort', new DOMException('This operation was aborted', 'AbortError'), ModelCallAbortedError],
    ['a bug', new RangeError('oops'), ModelUnexpectedError],
  ])('%s', (_what, error, expected) => {
    expect(classifyModelError(error)).toBeInstanceOf(expected);
  });

  it('classifies a 429 by its status even when the text reads like an overflow', () => {
    expect(classifyModelError(sdkError(429, 'rate_limit_error', 'prompt is too long for your tier'))).toBeInstanceOf(
      ModelRateLimitedError,
    );
  });

  it('reads retry-after from the SDK error headers', () => {
    const err = classifyModelError(sdkError(529, 'overloaded_error', 'Overloaded', { 'retry-after': '3' }));
    expect((err as ModelOverloadedError).retryAfterMs).toBe(3000);
  });

  it('returns a ModelError unchanged', () => {
    const err = new ModelServerError({ status: 502 });
    expect(classifyModelError(err)).toBe(err);
  });

  it('keeps the provider message and parsed tokens on an overflow', () => {
    const err = classifyModelError(
      sdkError(400, 'invalid_request_error', 'prompt is too long: 212345 tokens > 200000 maximum'),
    );
    expect(err).toMatchObject({
      status: 400,
      providerMessage: 'prompt is too long: 212345 tokens > 200000 maximum',
      promptTokens: 212345,
      maxTokens: 200000,
    });
  });
});

describe('classifyHttpFailure', () => {
  it('uses the OpenAI error code to spot an overflow', () => {
    const err = classifyHttpFailure({
      status: 400,
      providerMessage: 'bad request',
      errorCode: 'context_length_exceeded',
    });
    expect(err).toBeInstanceOf(ContextOverflowError);
  });

  it('puts the given fix in an auth error', () => {
    const err = classifyHttpFailure({ status: 401, providerMessage: 'no', authFix: 'Set FOO.' });
    expect(err.message).toContain('Set FOO.');
  });
});

describe('parseOverflowTokens', () => {
  it.each<[string, { promptTokens?: number; maxTokens?: number }]>([
    ['prompt is too long: 212345 tokens > 200000 maximum', { promptTokens: 212345, maxTokens: 200000 }],
    [
      'input length and `max_tokens` exceed context limit: 27661 + 4096 > 30000, decrease input length or `max_tokens` and try again',
      { promptTokens: 27661, maxTokens: 30000 },
    ],
    [
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.",
      { promptTokens: 130512, maxTokens: 128000 },
    ],
    // llama-cpp-python and OpenAI: "requested" counts max_tokens too; the prompt is the messages' part.
    [
      "This model's maximum context length is 4096 tokens. However, you requested 4751 tokens (4655 in the messages, 96 in the completion). Please reduce the length of the messages or completion.",
      { promptTokens: 4655, maxTokens: 4096 },
    ],
    [
      "This model's maximum context length is 128000 tokens. However, you requested 130512 tokens",
      { maxTokens: 128000 },
    ],
    ["This model's maximum context length is 8,192 tokens.", { maxTokens: 8192 }],
    ['context length exceeded', {}],
  ])('%s', (message, expected) => {
    expect(parseOverflowTokens(message)).toEqual(expected);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each<[string, Record<string, string>, number | undefined]>([
    ['seconds', { 'retry-after': '2' }, 2000],
    ['fractional seconds', { 'retry-after': '0.5' }, 500],
    ['an HTTP date', { 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }, 30_000],
    ['retry-after-ms wins', { 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    ['a date in the past', { 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }, undefined],
    ['garbage', { 'retry-after': 'soon' }, undefined],
    ['absent', {}, undefined],
    ['a huge value is capped', { 'retry-after': '86400' }, MAX_RETRY_AFTER_MS],
  ])('%s', (_what, headers, expected) => {
    expect(parseRetryAfterMs(new Headers(headers), now)).toBe(expected);
    expect(parseRetryAfterMs(headers, now)).toBe(expected);
  });
});

describe('toActivityFailure', () => {
  it.each<[Error, string, boolean]>([
    [new ModelRateLimitedError({ status: 429 }), MODEL_FAILURE_TYPES.rateLimited, false],
    [new ModelOverloadedError({ status: 529 }), MODEL_FAILURE_TYPES.overloaded, false],
    [new ModelServerError({ status: 500 }), MODEL_FAILURE_TYPES.serverError, false],
    [new ModelTimeoutError(), MODEL_FAILURE_TYPES.timeout, false],
    [new ModelConnectionError(), MODEL_FAILURE_TYPES.connection, false],
    [new ModelTruncatedResponseError(), MODEL_FAILURE_TYPES.truncated, false],
    [new ModelCallAbortedError(), MODEL_FAILURE_TYPES.aborted, false],
    [
      new ContextOverflowError({ status: 400, providerMessage: 'prompt is too long' }),
      MODEL_FAILURE_TYPES.contextOverflow,
      true,
    ],
    [new ModelRequestInvalidError({ status: 400 }), MODEL_FAILURE_TYPES.requestInvalid, true],
    [new ModelAuthError({ status: 401 }), MODEL_FAILURE_TYPES.auth, true],
    [new RangeError('bug'), MODEL_FAILURE_TYPES.unexpected, false],
  ])('%p → %s (nonRetryable %s)', (error, type, nonRetryable) => {
    const failure = toActivityFailure(error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(type);
    expect(failure.nonRetryable).toBe(nonRetryable);
  });

  it('sets nextRetryDelay only when the provider gave a retry-after', () => {
    expect(toActivityFailure(new ModelRateLimitedError({ status: 429, retryAfterMs: 1200 })).nextRetryDelay).toBe(1200);
    expect(toActivityFailure(new ModelRateLimitedError({ status: 429 })).nextRetryDelay).toBeUndefined();
  });

  it('classifies raw SDK errors itself', () => {
    expect(toActivityFailure(sdkError(429, 'rate_limit_error', 'x', { 'retry-after': '4' }))).toMatchObject({
      type: MODEL_FAILURE_TYPES.rateLimited,
      nextRetryDelay: 4000,
    });
  });

  it('returns an ApplicationFailure unchanged', () => {
    const failure = ApplicationFailure.nonRetryable('x', 'Other');
    expect(toActivityFailure(failure)).toBe(failure);
  });
});

describe('classifyHttpFailure without a status (an error event inside a stream)', () => {
  it.each<[string | undefined, new (...args: never[]) => Error]>([
    ['api_error', ModelServerError],
    [undefined, ModelServerError],
    ['invalid_request_error', ModelRequestInvalidError],
    ['rate_limit_error', ModelRateLimitedError],
  ])('type %s', (errorType, expected) => {
    expect(classifyHttpFailure({ status: undefined, errorType, providerMessage: 'x' })).toBeInstanceOf(expected);
  });
});
