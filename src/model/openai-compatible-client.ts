/**
 * `ModelClient` over an OpenAI-compatible `POST …/chat/completions` endpoint (a local Ollama, vLLM,
 * or a hosted gateway), with global fetch, streamed, tools included. An agent's chat model
 * (`model.provider: "openai-compatible"` in keel.config.json) or the optional compaction model.
 */
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';
import {
  classifyHttpFailure,
  classifyModelError,
  ModelCallAbortedError,
  ModelError,
  ModelRequestInvalidError,
  ModelServerError,
  ModelTimeoutError,
  ModelUnexpectedError,
} from './errors';
import type { ModelCallOptions, ModelClient, ModelRequest, ModelResponse, ModelStreamEvent } from './model-client';
import {
  chatCompletionSchema,
  chatUsage,
  fromChatCompletion,
  toChatMessages,
  toChatTools,
  type ChatCompletion,
} from './openai-compatible-convert';
import { EmptyStreamError, readChatStream } from './openai-stream-reader';
import { StreamWatchdog } from './stream-watchdog';
import { jsonRequestBody } from './json-request-body';
import { isLocalEndpoint, withEndpointSlot } from './endpoint-slots';
import { estimatedUsage } from './estimated-usage';

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
  /**
   * Requests to this endpoint in flight at once, from this process; more wait their turn. Unset: 1 for
   * a loopback URL (a local server's one slot), no limit elsewhere.
   */
  maxConcurrentRequests: z.number().int().positive().optional(),
  /**
   * Stream replies that may call tools. Off for a server that cannot stream a tool choice
   * (llama-cpp-python); when on, a server that refuses such a stream is asked without streaming and
   * that is remembered for the endpoint and model.
   */
  streamToolTurns: z.boolean().default(true),
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

/** Endpoint and model pairs whose server refused to stream a reply that may call tools (learned, per process). */
const cannotStreamTools = new Set<string>();

/** A refusal that may be the server's "cannot stream this" (not overflow, auth, rate or a transport failure). */
function mayBeStreamingRefusal(err: unknown): boolean {
  return (
    (err instanceof ModelRequestInvalidError || err instanceof ModelServerError) &&
    err.status !== undefined &&
    err.status !== 404
  );
}

/** Abort reasons a Temporal activity's signal carries when the activity itself timed out (no heartbeat seen in time). */
const ACTIVITY_TIMEOUT_REASONS = new Set(['TIMED_OUT', 'HEARTBEAT_DETAILS_CONVERSION_FAILED']);

/** The request body before `stream` is decided. */
interface ChatRequestBody {
  readonly model: string;
  readonly messages: readonly object[];
  readonly [field: string]: unknown;
}

/** What one HTTP request gave: the completion, and whether it arrived as a stream. */
interface Answer {
  completion: ChatCompletion;
  streamed: boolean;
}

/**
 * One HTTP request per `complete`, no retries (Temporal retries), with two exceptions that each
 * send the same request once more without streaming: a `200` stream with no data at all (where a
 * server hides an overflow, which the unstreamed answer names), and a refused stream of a reply
 * that may call tools (remembered, so later tool turns go unstreamed at once). Streams report each
 * chunk through `onText`/`onEvent`; an unstreamed answer is reported once, whole. Requests wait
 * for a slot of the endpoint's `maxConcurrentRequests`. The response must start within
 * `timeoutMs`, then the body may take as long as it keeps sending and fails with a retryable
 * `ModelTimeoutError` after `idleTimeoutMs` of silence. A server that reports no usage gets Keel's
 * own count, marked `estimated`. Throws the typed errors of `./errors`; an error thrown by a
 * callback is rethrown as is.
 */
export class OpenAiCompatibleModelClient implements ModelClient {
  readonly #url: string;
  readonly #model: string | undefined;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #maxConcurrentRequests: number;
  readonly #streamToolTurns: boolean;

  constructor(config: OpenAiCompatibleConfigInput) {
    const parsed = openAiCompatibleConfigSchema.parse(config);
    this.#url = chatCompletionsUrl(parsed.baseUrl);
    this.#model = parsed.model;
    this.#apiKey = parsed.apiKey;
    this.#timeoutMs = parsed.timeoutMs;
    this.#idleTimeoutMs = parsed.idleTimeoutMs;
    this.#maxConcurrentRequests = parsed.maxConcurrentRequests ?? (isLocalEndpoint(this.#url) ? 1 : Infinity);
    this.#streamToolTurns = parsed.streamToolTurns;
  }

  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    const model = this.#model ?? request.model;
    const withTools = request.tools !== undefined && request.tools.length > 0;
    const body = {
      model,
      messages: toChatMessages(request.system, request.messages),
      max_tokens: request.maxTokens,
      // OpenAI's default when tools are sent, but some servers (llama-cpp-python) default to "none".
      ...(withTools ? { tools: toChatTools(request.tools!), tool_choice: request.toolChoice ?? 'auto' } : {}),
      // Reasoning servers take the level as their effort, and (OpenAI's o-series) no temperature beside it.
      ...(request.thinking
        ? { reasoning_effort: request.thinking.level }
        : request.temperature === undefined
          ? {}
          : { temperature: request.temperature }),
    };
    const learnedKey = `${this.#url} ${model}`;
    const stream = !withTools || (this.#streamToolTurns && !cannotStreamTools.has(learnedKey));
    const answer = await this.#inSlot(options.signal, async () => {
      try {
        return await this.#send(body, stream, options);
      } catch (err) {
        if (err instanceof EmptyStreamError) return this.#send(body, false, options);
        if (!(stream && withTools && mayBeStreamingRefusal(err))) throw err;
        const unstreamed = await this.#send(body, false, options);
        cannotStreamTools.add(learnedKey);
        return unstreamed;
      }
    });

    const { content, stopReason } = fromChatCompletion(answer.completion);
    if (!answer.streamed) {
      const text = content.flatMap((b) => (b.type === 'text' ? [(b as { text: string }).text] : [])).join('');
      if (text) {
        options.onEvent?.({ type: 'text', delta: text });
        options.onText?.(text, text);
      }
    }
    return {
      content,
      stopReason,
      usage: chatUsage(answer.completion.usage) ?? estimatedUsage(request, content),
      model: answer.completion.model ?? model,
    };
  }

  /** Runs `call` in a slot of the endpoint; a caller aborted while it waits gets `ModelCallAbortedError`. */
  async #inSlot<T>(signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    try {
      return await withEndpointSlot(this.#url, this.#maxConcurrentRequests, call, signal);
    } catch (err) {
      if (signal?.aborted && err === signal.reason)
        throw activityTimeout(signal) ?? new ModelCallAbortedError({ cause: err });
      throw err;
    }
  }

  /** One HTTP request, streamed or not; typed errors only. */
  async #send(body: ChatRequestBody, stream: boolean, options: ModelCallOptions): Promise<Answer> {
    const model = body.model;
    const watchdog = new StreamWatchdog();
    const signal = options.signal ? AbortSignal.any([options.signal, watchdog.signal]) : watchdog.signal;
    const idle = (): void => watchdog.arm(this.#idleTimeoutMs, 'the model sent nothing');
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
    try {
      watchdog.arm(this.#timeoutMs, 'the model did not start answering within');
      const response = await fetch(this.#url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.#apiKey ? { authorization: `Bearer ${this.#apiKey}` } : {}),
        },
        // Keel's encoding: only the messages new since the last call are encoded (json-request-body.ts).
        body: jsonRequestBody(stream ? { ...body, stream: true, stream_options: { include_usage: true } } : body),
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
      const streamed = (response.headers.get('content-type') ?? '').includes('text/event-stream');
      return {
        completion: streamed
          ? await readChatStream(chunks, model, report, AUTH_FIX)
          : parseCompletion(JSON.parse(await readAll(chunks))),
        streamed,
      };
    } catch (err) {
      if (callbackError !== undefined) throw callbackError;
      throw watchdog.expired ?? activityTimeout(options.signal) ?? classifyModelError(err);
    } finally {
      watchdog.stop();
    }
  }
}

/**
 * The activity's own timeout, when that is why its signal aborted: a worker too busy to heartbeat
 * (a starved CPU) reads as a timeout of the model call, not as an unexpected failure.
 */
function activityTimeout(signal: AbortSignal | undefined): ModelError | undefined {
  if (!signal?.aborted) return undefined;
  const reason: unknown = signal.reason;
  const name = typeof reason === 'string' ? reason : (reason as { message?: unknown } | null)?.message;
  if (typeof name !== 'string' || !ACTIVITY_TIMEOUT_REASONS.has(name)) return undefined;
  return new ModelTimeoutError({
    providerMessage: `the activity timed out (${name}) while the model was answering: the worker did not report progress in time`,
  });
}
