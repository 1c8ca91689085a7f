/**
 * `ModelClient` over the Anthropic Messages API with `@anthropic-ai/sdk`, streaming so progress
 * (heartbeats, NO_REPLY draft suppression) is visible while the reply is written.
 */
import Anthropic from '@anthropic-ai/sdk';
import { fromAnthropicMessage, toAnthropicParams } from './anthropic-convert';
import { parseAnthropicClientConfig, type AnthropicClientConfigInput } from './anthropic-config';
import { ModelConnectionError, ModelTruncatedResponseError, ModelUnexpectedError, classifyModelError } from './errors';
import type { ModelCallOptions, ModelClient, ModelRequest, ModelResponse, ModelStreamEvent } from './model-client';
import { StreamWatchdog } from './stream-watchdog';
import type { BetaMessage, BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { appliedEditsOf, compactionOf, compactionUsageOf, toAnthropicBetaParams } from './anthropic-context-management';
import { jsonRequestBody } from './json-request-body';

/** A reply of the standard or of the beta endpoint. */
type AnthropicMessage = Anthropic.Message | BetaMessage;

/** A raw stream event of the standard or of the beta endpoint. */
type AnthropicStreamEvent = Anthropic.MessageStreamEvent | BetaRawMessageStreamEvent;

/** What `complete` uses of the SDK's message stream; the standard and the beta stream both fit it. */
interface MessageStreamLike<M extends AnthropicMessage> {
  on(event: 'connect', listener: () => void): unknown;
  on(event: 'streamEvent', listener: (event: AnthropicStreamEvent) => void): unknown;
  finalMessage(): Promise<M>;
  abort(): void;
}

/** Keel's view of one raw stream event, or undefined for events it does not report (ping, block stop). */
function toStreamEvent(event: AnthropicStreamEvent): ModelStreamEvent | undefined {
  switch (event.type) {
    case 'message_start':
      return { type: 'messageStart' };
    case 'message_stop':
      return { type: 'messageStop' };
    case 'content_block_start':
      return event.content_block.type === 'tool_use'
        ? { type: 'toolCallStart', id: event.content_block.id, name: event.content_block.name }
        : undefined;
    case 'content_block_delta':
      if (event.delta.type === 'text_delta') return { type: 'text', delta: event.delta.text };
      if (event.delta.type === 'thinking_delta') return { type: 'thinking', delta: event.delta.thinking };
      if (event.delta.type === 'input_json_delta')
        return { type: 'toolCallInput', partialJson: event.delta.partial_json };
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Calls Anthropic once per `complete`: the SDK runs with `maxRetries: 0` because retries belong to
 * Temporal (each hidden SDK retry would be another billed call without an idempotency key).
 * Throws the typed errors of `./errors`; a stream that ends before `message_stop` throws
 * `ModelTruncatedResponseError`, never a partial reply. The SDK's `timeout` only bounds the wait
 * for the response headers, so the stream itself is watched: `idleTimeoutMs` without an event
 * aborts it with a retryable `ModelTimeoutError`, however long a live stream has been running.
 *
 * @example
 *   const model = new AnthropicModelClient({ apiKey: config.anthropicApiKey });
 *   const reply = await model.complete({ model: 'claude-sonnet-4-5', messages, maxTokens: 1024 }, { onText: beat });
 */
export class AnthropicModelClient implements ModelClient {
  /** Sends `contextManagement` as the beta `context_management` (server compaction, context editing). */
  readonly supportsContextManagement = true;
  readonly #sdk: Anthropic;
  readonly #idleTimeoutMs: number;
  /** Where requests go and which setting says so: `http://127.0.0.1:9 (ANTHROPIC_BASE_URL)`. */
  readonly #endpoint: string;

  constructor(config: AnthropicClientConfigInput) {
    const { apiKey, baseURL, timeoutMs, idleTimeoutMs, baseURLSetting } = parseAnthropicClientConfig(config);
    this.#sdk = new Anthropic({ apiKey, baseURL, maxRetries: 0, timeout: timeoutMs });
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#endpoint = `${baseURL} (${baseURLSetting})`;
  }

  async complete(request: ModelRequest, options: ModelCallOptions = {}): Promise<ModelResponse> {
    // Context management is a beta: its request goes through the beta endpoint with its headers.
    if (request.contextManagement) {
      // `betas` travels as a header.
      const { betas, ...body } = toAnthropicBetaParams(toAnthropicParams(request), request);
      const message = await this.#streamed(
        (signal) =>
          this.#sdk.beta.messages.stream({ ...body, ...(betas ? { betas } : {}), messages: [] }, sending(body, signal)),
        options,
      );
      const compaction = compactionOf(message);
      const appliedEdits = appliedEditsOf(message.context_management);
      const compactionUsage = compactionUsageOf(message);
      return {
        ...(compactionUsage ? { compactionUsage } : {}),
        ...(compaction ? { compaction } : {}),
        ...(appliedEdits.length > 0 ? { appliedEdits } : {}),
        ...toModelResponse(message),
      };
    }
    const params = toAnthropicParams(request);
    const message = await this.#streamed(
      (signal) => this.#sdk.messages.stream({ ...params, messages: [] }, sending(params, signal)),
      options,
    );
    return toModelResponse(message);
  }

  /** Runs one stream to its final message, under the idle watchdog, reporting progress to `options`. */
  async #streamed<M extends AnthropicMessage>(
    open: (signal: AbortSignal) => MessageStreamLike<M>,
    options: ModelCallOptions,
  ): Promise<M> {
    const watchdog = new StreamWatchdog();
    const signal = options.signal ? AbortSignal.any([options.signal, watchdog.signal]) : watchdog.signal;
    const idle = (): void => watchdog.arm(this.#idleTimeoutMs, 'the model sent nothing');
    const stream = open(signal);
    // Pings never reach these listeners (the SDK drops them), so only real progress re-arms.
    stream.on('connect', idle);
    let started = false;
    let stopped = false;
    let soFar = '';
    let callbackError: unknown;
    // A throwing callback is the caller's bug: stop the call and rethrow it as is, not as a model error.
    const guarded = (fn: () => void): void => {
      try {
        fn();
      } catch (err) {
        callbackError ??= err;
        stream.abort();
      }
    };
    stream.on('streamEvent', (event) => {
      idle();
      if (event.type === 'message_start') started = true;
      if (event.type === 'message_stop') stopped = true;
      const keelEvent = toStreamEvent(event);
      if (keelEvent && options.onEvent) guarded(() => options.onEvent!(keelEvent));
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
        const delta = event.delta.text;
        soFar += delta;
        if (options.onText) guarded(() => options.onText!(delta, soFar));
      }
    });

    let message: M;
    try {
      message = await stream.finalMessage();
    } catch (err) {
      if (callbackError !== undefined) throw callbackError;
      if (watchdog.expired) throw watchdog.expired;
      const classified = classifyModelError(err);
      // The stream began but ended without message_stop and without a transport error: a cut-off reply.
      if (classified instanceof ModelUnexpectedError && started && !stopped) {
        throw new ModelTruncatedResponseError({ providerMessage: classified.providerMessage, cause: err });
      }
      throw classified instanceof ModelConnectionError ? classified.at(this.#endpoint) : classified;
    } finally {
      watchdog.stop();
    }
    if (callbackError !== undefined) throw callbackError;
    if (!stopped) throw new ModelTruncatedResponseError({ providerMessage: 'stream ended before message_stop' });
    return message;
  }
}

/**
 * The SDK's request options for one stream. The body is Keel's encoding of the params (only new
 * messages encoded, json-request-body.ts), sent as is through the `body` request option. The SDK
 * still reads the params for its headers (betas) and bookkeeping, but not their messages: it would
 * walk every one of them (for helper markers Keel never sets) and copy them into the stream's
 * record, which Keel never reads.
 */
function sending(body: { readonly messages: readonly object[] }, signal: AbortSignal) {
  return {
    signal,
    body: jsonRequestBody({ ...body, stream: true }),
    headers: { 'content-type': 'application/json' },
  };
}

/** The reply's content, stop reason, usage and model, from a standard or a beta message. */
function toModelResponse(message: AnthropicMessage): ModelResponse {
  const assistant = fromAnthropicMessage(message);
  return {
    content: assistant.content,
    stopReason: assistant.stopReason ?? 'stop',
    usage: {
      input: message.usage.input_tokens,
      output: message.usage.output_tokens,
      cacheRead: message.usage.cache_read_input_tokens ?? 0,
      cacheWrite: message.usage.cache_creation_input_tokens ?? 0,
    },
    model: message.model,
  };
}
