/**
 * `ModelClient` over an OpenAI-compatible `POST …/chat/completions` endpoint (a local Ollama, vLLM,
 * or a hosted gateway), with global fetch, streamed, tools included. An agent's chat model
 * (`model.provider: "openai-compatible"` in keel.config.json) or the optional compaction model.
 */
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';
import { classifyHttpFailure, classifyModelError, ModelTruncatedResponseError, ModelUnexpectedError } from './errors';
import type { ModelCallOptions, ModelClient, ModelRequest, ModelResponse, ModelStreamEvent } from './model-client';
import {
  chatCompletionSchema,
  chatUsage,
  fromChatCompletion,
  toChatMessages,
  toChatTools,
  type ChatCompletion,
} from './openai-compatible-convert';
import { ChatStreamAccumulator, parseChatStreamData } from './openai-sse';
import { SseDecoder } from './sse-decoder';
import { StreamWatchdog } from './stream-watchdog';
import { jsonRequestBody } from './json-request-body';

/** Settings of `OpenAiCompatibleModelClient`: endpoint URL, optional fixed model and key, timeouts. */
export const openAiCompatibleConfigSchema = z.object({
  /** `http://host:11434/v1`, `http://host:8000`, or the full `…/chat/completions` URL. */
  baseUrl: z.url('the OpenAI-compatible endpoint must be an http(s) URL (KEEL_COMPACTION_MODEL_URL)'),
  /** When set, every call uses this model (the caller may build requests with the main model's name). */
  model: z.string().min(1).optional(),
  /** Sent as `Authorization: Bearer …`; local servers usually need none. */
  apiKey: z.string().min(1).optional(),
  /** The response must start (status and headers) within this; a model still reading a long prompt may take a while. */
  timeoutMs: z.number().int().positive().default(DEFAULTS.modelRequestTimeoutMs),
  /** Once started, the body fails after this long without a byte; a body that keeps coming is never cut. */
  idleTimeoutMs: z.number().int().positive().default(DEFAULTS.modelStreamIdleTimeoutMs),
});

/** What callers pass in (defaults not yet applied). */
export type OpenAiCompatibleConfigInput = z.input<typeof openAiCompatibleConfigSchema>;

const AUTH_FIX =
  "Check the API key and URL configured for the OpenAI-compatible endpoint (the agent's model.baseUrl / apiKeyEnv in keel.config.json, or KEEL_COMPACTION_MODEL_URL).";

/** The chat-completions URL for a base URL written any of the usual ways. */
export function chatCompletionsUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  if (trimmed.endsWith('/chat/completions')) return trimmed;
  if (/\/v\d+$/.test(trimmed)) return `${trimmed}/chat/completions`;
  return `${trimmed}/v1/chat/completions`;
}

/** The provider's error text and type from an error body (OpenAI `{error:{message,type,code}}`, or plain text). */
function errorFields(text: string): { message: string; type?: string; code?: string } {
  try {
    const body = JSON.parse(text) as {
      error?: { message?: unknown; type?: unknown; code?: unknown } | string;
      message?: unknown;
    };
    const error = typeof body.error === 'string' ? { message: body.error } : body.error;
    const message =
      typeof error?.message === 'string' ? error.message : typeof body.message === 'string' ? body.message : text;
    return {
      message,
      ...(typeof error?.type === 'string' ? { type: error.type } : {}),
      ...(typeof error?.code === 'string' ? { code: error.code } : {}),
    };
  } catch {
    return { message: text };
  }
}

/** A response body as text, chunk by chunk; `onBytes` runs on every chunk (it re-arms the idle timeout). */
async function* bodyText(body: ReadableStream<Uint8Array> | null, onBytes: () => void): AsyncGenerator<string> {
  if (!body) return;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onBytes();
      yield decoder.decode(value, { stream: true });
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  } finally {
    // Stopping early (after `[DONE]`, or on an error) releases the connection.
    reader.cancel().catch(() => undefined);
  }
}

async function readAll(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}

function parseCompletion(json: unknown): ChatCompletion {
  const parsed = chatCompletionSchema.safeParse(json);
  if (!parsed.success) {
    throw new ModelUnexpectedError({
      providerMessage: `not a chat completion: ${parsed.error.issues[0]?.message ?? 'invalid body'}`,
    });
  }
  return parsed.data;
}

/**
 * Folds an SSE body into a completion, reporting each chunk's events. Complete at `[DONE]`, or at
 * the end of the body once a `finish_reason` came (some servers send no `[DONE]`); anything less is
 * a cut-off reply.
 */
async function readStream(
  chunks: AsyncIterable<string>,
  model: string,
  report: (event: ModelStreamEvent, soFar: string) => void,
): Promise<ChatCompletion> {
  const decoder = new SseDecoder();
  const reply = new ChatStreamAccumulator();
  const take = (data: string): boolean => {
    const read = parseChatStreamData(data);
    if (read.kind === 'done') return true;
    if (read.kind === 'invalid') throw new ModelUnexpectedError({ providerMessage: read.why });
    if (read.kind === 'error') {
      throw classifyHttpFailure({
        status: undefined,
        errorType: read.error.type,
        errorCode: read.error.code,
        providerMessage: read.error.message,
        authFix: AUTH_FIX,
      });
    }
    for (const event of reply.add(read.chunk)) report(event, reply.text);
    return false;
  };
  let done = false;
  for await (const text of chunks) {
    for (const message of decoder.push(text)) done ||= take(message.data);
    if (done) break;
  }
  if (!done) for (const message of decoder.end()) done ||= take(message.data);
  if (!done && !reply.finished)
    throw new ModelTruncatedResponseError({ providerMessage: 'stream ended before its last chunk' });
  report({ type: 'messageStop' }, reply.text);
  return reply.completion(model);
}

/**
 * One HTTP request per `complete`, no retries (Temporal retries). Asks for a stream and reports
 * each chunk through `onText`/`onEvent`; a server that answers JSON instead is read whole and
 * reported once. No wall clock bounds the call: the response must start within `timeoutMs`, then
 * the body may take as long as it keeps sending and fails with a retryable `ModelTimeoutError`
 * after `idleTimeoutMs` of silence. Throws the typed errors of `./errors`; an error thrown by a
 * callback is rethrown as is.
 */
export class OpenAiCompatibleModelClient implements ModelClient {
  readonly #url: string;
  readonly #model: string | undefined;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #idleTimeoutMs: number;

  constructor(config: OpenAiCompatibleConfigInput) {
    const parsed = openAiCompatibleConfigSchema.parse(config);
    this.#url = chatCompletionsUrl(parsed.baseUrl);
    this.#model = parsed.model;
    this.#apiKey = parsed.apiKey;
    this.#timeoutMs = parsed.timeoutMs;
    this.#idleTimeoutMs = parsed.idleTimeoutMs;
  }

  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    const model = this.#model ?? request.model;
    const body = {
      model,
      messages: toChatMessages(request.system, request.messages),
      max_tokens: request.maxTokens,
      stream: true,
      stream_options: { include_usage: true },
      ...(request.tools && request.tools.length > 0 ? { tools: toChatTools(request.tools) } : {}),
      ...(request.toolChoice && request.tools && request.tools.length > 0 ? { tool_choice: request.toolChoice } : {}),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    };
    const watchdog = new StreamWatchdog();
    const signal = options.signal ? AbortSignal.any([options.signal, watchdog.signal]) : watchdog.signal;
    const idle = (): void => watchdog.arm(this.#idleTimeoutMs, 'no data from the model');
    let callbackError: unknown;
    const report = (event: ModelStreamEvent, soFar: string): void => {
      try {
        options.onEvent?.(event);
        if (event.type === 'text') options.onText?.(event.delta, soFar);
      } catch (err) {
        callbackError = err;
        throw err;
      }
    };

    let completion: ChatCompletion;
    let streamed: boolean;
    try {
      watchdog.arm(this.#timeoutMs, 'no response from the model');
      const response = await fetch(this.#url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.#apiKey ? { authorization: `Bearer ${this.#apiKey}` } : {}),
        },
        // Keel's encoding: only the messages new since the last call are encoded (json-request-body.ts).
        body: jsonRequestBody(body),
        signal,
      });
      idle();
      const chunks = bodyText(response.body, idle);
      if (!response.ok) {
        const fields = errorFields(await readAll(chunks));
        throw classifyHttpFailure({
          status: response.status,
          headers: response.headers,
          errorType: fields.type,
          errorCode: fields.code,
          providerMessage: fields.message,
          authFix: AUTH_FIX,
        });
      }
      // Some servers ignore `stream: true` and answer one JSON body.
      streamed = (response.headers.get('content-type') ?? '').includes('text/event-stream');
      completion = streamed
        ? await readStream(chunks, model, report)
        : parseCompletion(JSON.parse(await readAll(chunks)));
    } catch (err) {
      if (callbackError !== undefined) throw callbackError;
      throw watchdog.expired ?? classifyModelError(err);
    } finally {
      watchdog.stop();
    }

    const { content, stopReason } = fromChatCompletion(completion);
    if (!streamed) {
      const text = content.flatMap((b) => (b.type === 'text' ? [(b as { text: string }).text] : [])).join('');
      if (text) report({ type: 'text', delta: text }, text);
    }
    return {
      content,
      stopReason,
      usage: chatUsage(completion.usage),
      model: completion.model ?? model,
    };
  }
}
