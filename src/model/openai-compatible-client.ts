/**
 * `ModelClient` over an OpenAI-compatible `POST …/chat/completions` endpoint (a local Ollama, vLLM,
 * or a hosted gateway), with global fetch and no streaming. Used as the optional compaction model.
 */
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults';
import { classifyHttpFailure, classifyModelError, ModelUnexpectedError } from './errors';
import type { ModelCallOptions, ModelClient, ModelRequest, ModelResponse } from './model-client';
import { chatCompletionSchema, fromChatCompletion, toChatMessages, toChatTools } from './openai-compatible-convert';

/** Settings of `OpenAiCompatibleModelClient`: endpoint URL, optional fixed model and key, timeout. */
export const openAiCompatibleConfigSchema = z.object({
  /** `http://host:11434/v1`, `http://host:8000`, or the full `…/chat/completions` URL. */
  baseUrl: z.url('the OpenAI-compatible endpoint must be an http(s) URL (KEEL_COMPACTION_MODEL_URL)'),
  /** When set, every call uses this model (the caller may build requests with the main model's name). */
  model: z.string().min(1).optional(),
  /** Sent as `Authorization: Bearer …`; local servers usually need none. */
  apiKey: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().default(DEFAULTS.modelRequestTimeoutMs),
});

/** What callers pass in (defaults not yet applied). */
export type OpenAiCompatibleConfigInput = z.input<typeof openAiCompatibleConfigSchema>;

const AUTH_FIX = 'Check the API key and URL configured for the OpenAI-compatible endpoint (KEEL_COMPACTION_MODEL_URL).';

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
    const body = JSON.parse(text) as { error?: { message?: unknown; type?: unknown; code?: unknown } | string; message?: unknown };
    const error = typeof body.error === 'string' ? { message: body.error } : body.error;
    const message = typeof error?.message === 'string' ? error.message : typeof body.message === 'string' ? body.message : text;
    return {
      message,
      ...(typeof error?.type === 'string' ? { type: error.type } : {}),
      ...(typeof error?.code === 'string' ? { code: error.code } : {}),
    };
  } catch {
    return { message: text };
  }
}

/**
 * One HTTP request per `complete`, no retries (Temporal retries). Throws the typed errors of
 * `./errors`; `onText` fires once with the whole text since the endpoint is not streamed.
 */
export class OpenAiCompatibleModelClient implements ModelClient {
  readonly #url: string;
  readonly #model: string | undefined;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;

  constructor(config: OpenAiCompatibleConfigInput) {
    const parsed = openAiCompatibleConfigSchema.parse(config);
    this.#url = chatCompletionsUrl(parsed.baseUrl);
    this.#model = parsed.model;
    this.#apiKey = parsed.apiKey;
    this.#timeoutMs = parsed.timeoutMs;
  }

  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    const model = this.#model ?? request.model;
    const body = {
      model,
      messages: toChatMessages(request.system, request.messages),
      max_tokens: request.maxTokens,
      stream: false,
      ...(request.tools && request.tools.length > 0 ? { tools: toChatTools(request.tools) } : {}),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    };
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;

    let json: unknown;
    try {
      const response = await fetch(this.#url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.#apiKey ? { authorization: `Bearer ${this.#apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal,
      });
      if (!response.ok) {
        const fields = errorFields(await response.text());
        throw classifyHttpFailure({
          status: response.status,
          headers: response.headers,
          errorType: fields.type,
          errorCode: fields.code,
          providerMessage: fields.message,
          authFix: AUTH_FIX,
        });
      }
      json = await response.json();
    } catch (err) {
      throw classifyModelError(err);
    }

    const parsed = chatCompletionSchema.safeParse(json);
    if (!parsed.success) {
      throw new ModelUnexpectedError({ providerMessage: `not a chat completion: ${parsed.error.issues[0]?.message ?? 'invalid body'}` });
    }
    const { content, stopReason } = fromChatCompletion(parsed.data);
    const text = content.flatMap((b) => (b.type === 'text' ? [(b as { text: string }).text] : [])).join('');
    if (text) {
      options.onEvent?.({ type: 'text', delta: text });
      options.onText?.(text, text);
    }
    return {
      content,
      stopReason,
      usage: { input: parsed.data.usage?.prompt_tokens ?? 0, output: parsed.data.usage?.completion_tokens ?? 0 },
      model: parsed.data.model ?? model,
    };
  }
}
