/**
 * Script steps for the fake Anthropic server (`fake-anthropic.ts`) and builders that read as the
 * situation they stage: `fakeReply.text('hi')`, `fakeReply.rateLimited({ retryAfter: 2 })`.
 */

/** Error `type` values the Anthropic API puts in `{type:'error', error:{type, message}}`. */
export type FakeErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

export type FakeContentBlock =
  /** `chunks` sets the streamed `text_delta`s; by default the text streams word by word. */
  | { type: 'text'; text: string; chunks?: string[] }
  /** `inputJson` streams as the input instead of `input` (what JSON.stringify cannot write: 100k levels, a bare string). */
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; inputJson?: string }
  | { type: 'thinking'; thinking: string; signature: string }
  /** Server compaction's block (beta `compact-2026-01-12`). */
  | { type: 'compaction'; content: string | null; encrypted_content: string | null; signature: string };

/** When and how fast the fake answers. */
export interface FakeTiming {
  /** Wait this long before sending anything (status line included). */
  delayMs?: number;
  /** Streaming only: wait this long between SSE events (heartbeat tests). */
  eventDelayMs?: number;
}

/** A successful assistant message (JSON, SSE, or a chat completion, whichever was asked for). */
export interface FakeMessageStep extends FakeTiming {
  kind: 'message';
  content: FakeContentBlock[];
  /** Anthropic stop reason; default `tool_use` when a tool_use block is present, else `end_turn`. */
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'pause_turn' | 'compaction';
  /** Beta context management: the response's `context_management` (`applied_edits`). */
  contextManagement?: { applied_edits: Array<Record<string, unknown>> };
  /** Beta: `usage.iterations` (compaction and message iterations). */
  iterations?: Array<Record<string, unknown>>;
  /** Default: input = request body length / 4, output = content length / 4. */
  usage?: { input_tokens?: number; output_tokens?: number };
  /**
   * Destroy the connection mid-response: streaming after this many SSE events (`ping` counts),
   * non-streaming halfway through the JSON body.
   */
  truncateAfterEvents?: number;
  /** Streaming only: after this many SSE events send an SSE `error` event and end the stream. */
  streamError?: { afterEvents: number; errorType: FakeErrorType; message: string };
}

/** An HTTP error with the Anthropic error body shape. */
export interface FakeErrorStep extends FakeTiming {
  kind: 'error';
  status: number;
  errorType: FakeErrorType;
  message: string;
  /** Sent as the `retry-after` header (seconds, or an HTTP date). */
  retryAfter?: string;
  headers?: Record<string, string>;
  /** OpenAI-compatible error `code` (e.g. `context_length_exceeded`). */
  code?: string;
}

export type FakeStep = FakeMessageStep | FakeErrorStep;

interface ErrorOptions extends FakeTiming {
  message?: string;
  /** Seconds (number) or any header value (e.g. an HTTP date). */
  retryAfter?: number | string;
  headers?: Record<string, string>;
}

function errorStep(
  status: number,
  errorType: FakeErrorType,
  defaultMessage: string,
  options: ErrorOptions = {},
): FakeErrorStep {
  const { message, retryAfter, headers, ...timing } = options;
  return {
    kind: 'error',
    status,
    errorType,
    message: message ?? defaultMessage,
    ...(retryAfter === undefined ? {} : { retryAfter: String(retryAfter) }),
    ...(headers ? { headers } : {}),
    ...timing,
  };
}

/** Builders for the common steps; every one returns a plain `FakeStep` that can be tweaked. */
export const fakeReply = {
  /** The assistant answers with text. */
  text(text: string, options: Omit<FakeMessageStep, 'kind' | 'content'> & { chunks?: string[] } = {}): FakeMessageStep {
    const { chunks, ...rest } = options;
    return { kind: 'message', content: [{ type: 'text', text, ...(chunks ? { chunks } : {}) }], ...rest };
  },

  /** The assistant calls tools (optionally after some text); stop reason `tool_use`. */
  toolUse(
    calls: Array<{ id: string; name: string; input: Record<string, unknown>; inputJson?: string }>,
    options: Omit<FakeMessageStep, 'kind' | 'content'> & { text?: string } = {},
  ): FakeMessageStep {
    const { text, ...rest } = options;
    const blocks: FakeContentBlock[] = text === undefined ? [] : [{ type: 'text', text }];
    for (const call of calls) blocks.push({ type: 'tool_use', ...call });
    return { kind: 'message', content: blocks, stopReason: 'tool_use', ...rest };
  },

  /** Any content blocks. */
  message(content: FakeContentBlock[], options: Omit<FakeMessageStep, 'kind' | 'content'> = {}): FakeMessageStep {
    return { kind: 'message', content, ...options };
  },

  /** The connection dies after `afterEvents` SSE events (or halfway through a JSON body). */
  truncated(text: string, afterEvents = 4, options: FakeTiming = {}): FakeMessageStep {
    return { kind: 'message', content: [{ type: 'text', text }], truncateAfterEvents: afterEvents, ...options };
  },

  /** 429 `rate_limit_error`. */
  rateLimited(options?: ErrorOptions): FakeErrorStep {
    return errorStep(
      429,
      'rate_limit_error',
      'Number of request tokens has exceeded your per-minute rate limit',
      options,
    );
  },

  /** 529 `overloaded_error`. */
  overloaded(options?: ErrorOptions): FakeErrorStep {
    return errorStep(529, 'overloaded_error', 'Overloaded', options);
  },

  /** 500 `api_error`. */
  serverError(options?: ErrorOptions): FakeErrorStep {
    return errorStep(500, 'api_error', 'Internal server error', options);
  },

  /** 400 context overflow, worded as the Anthropic API words it. */
  overflow(tokens: number, maximum: number, options?: FakeTiming): FakeErrorStep {
    return errorStep(
      400,
      'invalid_request_error',
      `prompt is too long: ${tokens} tokens > ${maximum} maximum`,
      options,
    );
  },

  /** 400 `invalid_request_error` other than overflow. */
  invalidRequest(message: string, options?: FakeTiming): FakeErrorStep {
    return errorStep(400, 'invalid_request_error', message, options);
  },

  /** 401 `authentication_error`. */
  authError(options?: ErrorOptions): FakeErrorStep {
    return errorStep(401, 'authentication_error', 'invalid x-api-key', options);
  },

  /** Any status and error type. */
  error(status: number, errorType: FakeErrorType, message: string, options?: ErrorOptions): FakeErrorStep {
    return errorStep(status, errorType, message, options);
  },
};
