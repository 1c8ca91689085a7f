/**
 * A scriptable fake of the Anthropic Messages API (`POST /v1/messages`, JSON and SSE) and of an
 * OpenAI-compatible `POST /v1/chat/completions` (JSON), on 127.0.0.1 with an ephemeral port.
 *
 * The test process owns the script; anything that speaks HTTP can be pointed at `fake.url`
 * (a worker process gets it through `ANTHROPIC_BASE_URL`, see `fake.env`). Each request consumes
 * the next scripted step, then the responder if one is set; when both are missing the fake answers
 * 500 "fake-anthropic: script exhausted" and records the request in `fake.unexpected`, so
 * `fake.assertScriptConsumed()` fails the test instead of a retry loop hiding it.
 *
 * @example
 *   const fake = await startFakeAnthropic();
 *   fake.enqueue(fakeReply.rateLimited({ retryAfter: 2 }), fakeReply.text('hello'));
 *   // ... call the model with baseURL: fake.url ...
 *   fake.assertScriptConsumed();
 *   await fake.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeErrorStep, FakeMessageStep, FakeStep } from './fake-anthropic-steps';
import {
  stepCallsATool,
  toolChoiceIsNone,
  toolChoiceProblem,
  anthropicPairingProblem,
  anthropicToolSchemaProblem,
  openAiPairingProblem,
  openAiToolSchemaProblem,
} from './fake-request-rules';
import {
  anthropicErrorBody,
  anthropicMessageBody,
  anthropicSseEvents,
  fakeUsage,
  type FakeUsage,
  openAiCompletionBody,
  openAiErrorBody,
  sseText,
} from './fake-anthropic-render';
import { streamOpenAiSse } from './fake-openai-stream';
import {
  FakeOpenAiSlot,
  streamingToolChoiceRefusal,
  withToolChoice,
  type FakeOpenAiQuirks,
} from './fake-openai-quirks';
import {
  anthropicMaxTokensProblem,
  FAKE_DEFAULT_TOKEN_LIMIT,
  fakeMaxOutputTokens,
  promptOverflowStep,
  replyOverflowStep,
} from './fake-limits';
import { FakePromptCache, type FakeCacheUsage } from './fake-prompt-cache';
import { anthropicThinkingProblem } from './fake-thinking-rules';
import { FakeOpenAiPromptCache } from './fake-openai-prompt-cache';
import {
  contextManagementProblem,
  effectiveMessages,
  planContextManagement,
  type FakeContextManagementPlan,
} from './fake-context-management';

export { fakeReply } from './fake-anthropic-steps';
export type { FakeStep } from './fake-anthropic-steps';

/** The loosely typed JSON body a client sent (tests narrow what they inspect). */
export interface FakeRequestBody {
  model?: string;
  stream?: boolean;
  system?: unknown;
  max_tokens?: number;
  messages?: Array<{ role: string; content: any }>;
  tools?: Array<Record<string, any>>;
  [key: string]: unknown;
}

/** One recorded HTTP request. */
export interface FakeRequest {
  /** 0-based arrival order across both endpoints. */
  index: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  body: FakeRequestBody;
  /** True when the body asked for SSE (`stream: true`). */
  stream: boolean;
  /**
   * Milliseconds the fake itself spent on this request: reading the body once its headers arrived,
   * parsing, checking and prompt-cache keying (not a step's delay). A real provider's time is not
   * Keel's; benches subtract this to time a turn against a model that costs nothing (with the fake
   * in a process of its own: in Keel's process, reading interleaves with Keel's own sending).
   */
  fakeWorkMs: number;
  /** The usage the fake reported in its answer (Anthropic: with its `iterations`), once it answered with a message. */
  reportedUsage?: Record<string, unknown>;
}

/** Answers requests the script does not cover; `undefined` means "not mine" (the fake then fails loudly). */
export type FakeResponder = (request: FakeRequest) => FakeStep | undefined | Promise<FakeStep | undefined>;

export interface FakeAnthropicOptions {
  /** Used after the script runs out (same as calling `respondWith`). */
  defaultResponder?: FakeResponder;
  /**
   * The model's context window: every request whose prompt counts more tokens is refused with the
   * provider's own 400 "prompt is too long: N tokens > M maximum" (OpenAI: context_length_exceeded),
   * before any script step or responder sees it — as a real provider does. Default 200,000. A
   * `max_tokens` missing or above the model's output limit is refused too (`fake-limits.ts`).
   */
  tokenLimit?: number;
  /**
   * The window holds the prompt and the reply together: a request whose prompt plus `max_tokens`
   * exceeds `tokenLimit` is refused with a 400, as Claude models since 3.7 refuse it. Default on;
   * off only for a suite that imitates an older model.
   */
  countMaxTokens?: boolean;
  /**
   * Prompt caching: the shortest prefix the model caches (Anthropic: 1024 tokens for Sonnet and
   * Opus, 2048 for Haiku); shorter marked prefixes are neither written nor read. Default 1024.
   */
  cacheMinTokens?: number;
  /** How the chat-completions endpoint differs from OpenAI (a local llama-cpp-python's ways); none by default. */
  openAiQuirks?: FakeOpenAiQuirks;
}

/** How the fake counts a prompt: system, messages and tools at ~4 characters a token (not Keel's tokenizer, on purpose). */
export function fakePromptTokens(body: FakeRequestBody): number {
  return Math.ceil(JSON.stringify([body.system ?? null, body.messages ?? [], body.tools ?? []]).length / 4);
}

export interface FakeAnthropic {
  /** Base URL, e.g. `http://127.0.0.1:41234` (the SDK appends `/v1/messages`). */
  readonly url: string;
  /** Environment for a process that should talk to this fake. */
  readonly env: { ANTHROPIC_BASE_URL: string; ANTHROPIC_API_KEY: string };
  /** Every request received, in order. */
  readonly requests: readonly FakeRequest[];
  /** Requests that found no step and no responder. */
  readonly unexpected: readonly FakeRequest[];
  /** Requests refused as over the token limit (with the tokens the fake counted, `max_tokens` included when it counts). */
  readonly overflowed: ReadonlyArray<{ request: FakeRequest; tokens: number }>;
  /** Requests refused as the real API refuses them (broken tool pairing, a tool schema that is not an object), with the provider's message. */
  readonly invalid: ReadonlyArray<{ request: FakeRequest; problem: string }>;
  /** Streams a later request cut short (quirk `interruptOnNewRequest`): each ended in `[DONE]` without its finish chunk. */
  readonly interrupted: readonly FakeRequest[];
  /** Forgets every prompt prefix cached so far (as the cache's TTL would). */
  clearPromptCache(): void;
  /** Changes the shortest cacheable prefix from the next request on. */
  setCacheMinTokens(tokens: number): void;
  /** Changes the model's context window from the next request on (and, when given, whether `max_tokens` counts in it, see `countMaxTokens`). */
  setTokenLimit(tokens: number, options?: { countMaxTokens?: boolean }): void;
  /** Replaces the chat-completions endpoint's quirks from the next request on (`{}`: OpenAI's behaviour). */
  setOpenAiQuirks(quirks: FakeOpenAiQuirks): void;
  /** Appends steps to the script. */
  enqueue(...steps: FakeStep[]): void;
  /** Steps not yet consumed. */
  pendingSteps(): number;
  /** Sets (or clears with `undefined`) the responder used once the script is empty. */
  respondWith(responder: FakeResponder | undefined): void;
  /** Throws when a request went unanswered or scripted steps were never used. */
  assertScriptConsumed(): void;
  /** Resolves once at least `count` requests arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  /** Stops the server, cutting open connections and pending delays. */
  close(): Promise<void>;
}

const EXHAUSTED = 'fake-anthropic: script exhausted';
const WAIT_FOR_REQUESTS_TIMEOUT_MS = 10_000;

/** Starts a fake on 127.0.0.1 with an ephemeral port. */
export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const script: FakeStep[] = [];
  const requests: FakeRequest[] = [];
  const unexpected: FakeRequest[] = [];
  const overflowed: Array<{ request: FakeRequest; tokens: number }> = [];
  const invalid: Array<{ request: FakeRequest; problem: string }> = [];
  const interrupted: FakeRequest[] = [];
  let tokenLimit = options.tokenLimit ?? FAKE_DEFAULT_TOKEN_LIMIT;
  let countMaxTokens = options.countMaxTokens ?? true;
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  const arrivalWaiters = new Set<() => void>();
  let responder = options.defaultResponder;
  const promptCache = new FakePromptCache(options.cacheMinTokens);
  const openAiCache = new FakeOpenAiPromptCache();
  let closed = false;
  let messageCounter = 0;
  let openAiQuirks: FakeOpenAiQuirks = options.openAiQuirks ?? {};
  const openAiSlot = new FakeOpenAiSlot();

  // A delay that close() can cut short, so a closed fake leaves no timer behind.
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (closed || ms <= 0) return resolve();
      const entry = { timer: setTimeout(() => (timers.delete(entry), resolve()), ms), resolve };
      timers.add(entry);
    });

  const nextStep = async (request: FakeRequest): Promise<FakeStep | undefined> =>
    script.shift() ?? (responder ? await responder(request) : undefined);

  /**
   * The real API's 400 for a request it refuses on every call (recorded in `overflowed` or
   * `invalid`), or undefined: `max_tokens` within the model's output limit, the prompt and then the
   * prompt plus `max_tokens` within the window, tool pairing and schemas, context management and
   * cache markers.
   */
  function refusal(request: FakeRequest, api: 'anthropic' | 'openai'): FakeErrorStep | undefined {
    const { body } = request;
    const invalidStep = (problem: string): FakeErrorStep => {
      invalid.push({ request, problem });
      return { kind: 'error', status: 400, errorType: 'invalid_request_error', message: problem };
    };
    const maxTokensProblem =
      api === 'anthropic' ? anthropicMaxTokensProblem(body, fakeMaxOutputTokens(body.model)) : undefined;
    if (maxTokensProblem) return invalidStep(maxTokensProblem);
    // The API drops everything before a compaction block the request sends back.
    const tokens = fakePromptTokens(api === 'anthropic' ? { ...body, messages: effectiveMessages(body) } : body);
    if (tokens > tokenLimit) {
      overflowed.push({ request, tokens });
      return promptOverflowStep(tokens, tokenLimit, api);
    }
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : 0;
    if (countMaxTokens && tokens + maxTokens > tokenLimit) {
      overflowed.push({ request, tokens: tokens + maxTokens });
      return replyOverflowStep(tokens, maxTokens, tokenLimit, api);
    }
    const problem =
      api === 'anthropic'
        ? (toolChoiceProblem(body) ??
          anthropicToolSchemaProblem(body) ??
          anthropicPairingProblem(body) ??
          anthropicThinkingProblem(body) ??
          contextManagementProblem(body, request.headers) ??
          promptCache.problem(body))
        : (toolChoiceProblem(body) ?? openAiToolSchemaProblem(body) ?? openAiPairingProblem(body));
    return problem === undefined ? undefined : invalidStep(problem);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const began = performance.now();
    const rawBody = await readBody(req);
    let body: FakeRequestBody = {};
    try {
      body = rawBody ? (JSON.parse(rawBody) as FakeRequestBody) : {};
    } catch {
      // Recorded as is; the step decides the answer, as the real API would reject it.
    }
    const request: FakeRequest = {
      index: requests.length,
      method: req.method ?? '',
      path: (req.url ?? '').split('?')[0] ?? '',
      headers: req.headers,
      rawBody,
      body,
      stream: body.stream === true,
      fakeWorkMs: 0,
    };
    requests.push(request);
    for (const notify of arrivalWaiters) notify();

    const api =
      request.method === 'POST' && request.path === '/v1/messages'
        ? 'anthropic'
        : request.method === 'POST' && request.path === '/v1/chat/completions'
          ? 'openai'
          : undefined;
    if (api === 'openai' && openAiQuirks.interruptOnNewRequest) openAiSlot.interruptAll();
    const refused = api
      ? (refusal(request, api) ?? (api === 'openai' ? streamingToolChoiceRefusal(body, openAiQuirks) : undefined))
      : undefined;
    if (api && refused) {
      request.fakeWorkMs = performance.now() - began;
      const overflow = overflowed.at(-1)?.request === request;
      if (api === 'openai' && overflow && request.stream && openAiQuirks.emptyStreamOnOverflow) {
        // llama-cpp-python: the stream starts before the prompt is counted, then ends with nothing.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end();
      }
      return sendError(res, refused, api);
    }
    const plan = api === 'anthropic' ? planContextManagement(body) : undefined;
    request.fakeWorkMs = performance.now() - began;
    // A compaction that pauses answers by itself; otherwise the script answers, with the edits reported.
    const step =
      plan?.compaction && plan.pause
        ? compactionStep(plan)
        : api
          ? withContextManagement(withThinking(await nextStep(request), body, api, request.index), plan)
          : undefined;
    // A model asked for no tool call never makes one: a script that does is a test's mistake.
    if (api && step && toolChoiceIsNone(body) && stepCallsATool(step)) {
      unexpected.push(request);
      return sendJson(
        res,
        500,
        {},
        anthropicErrorBody(
          'api_error',
          `fake-anthropic: request #${request.index} set tool_choice none, but its step calls a tool`,
        ),
      );
    }
    if (!api || !step) {
      unexpected.push(request);
      const why = api
        ? `${EXHAUSTED} (request #${request.index} to ${request.path})`
        : `fake-anthropic: no route ${request.method} ${request.path}`;
      return sendJson(res, api ? 500 : 404, {}, anthropicErrorBody(api ? 'api_error' : 'not_found_error', why));
    }
    await wait(step.delayMs ?? 0);
    if (closed || res.destroyed) return;

    const ids = { messageId: `msg_fake_${++messageCounter}`, model: body.model ?? 'fake-model' };
    if (step.kind === 'error') return sendError(res, step, api);
    const serving = performance.now();
    if (api === 'openai') {
      const offered = withToolChoice(step, body, openAiQuirks);
      const usage = fakeUsage(offered, rawBody);
      const openAiUsage = {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_tokens: Math.min(usage.input_tokens, openAiCache.serve(body)),
      };
      request.fakeWorkMs += performance.now() - serving;
      const completion = openAiCompletionBody(offered, ids, openAiUsage);
      if (!(request.stream && openAiQuirks.noStreamUsage))
        request.reportedUsage = completion.usage as Record<string, unknown>;
      return request.stream
        ? streamOpenAiSse(res, offered, ids, openAiUsage, body, wait, () => closed, {
            quirks: openAiQuirks,
            slot: openAiSlot,
            onInterrupted: () => void interrupted.push(request),
          })
        : sendJsonMaybeTruncated(res, offered, completion);
    }
    const served = withCacheUsage(step, rawBody, promptCache.serve(body));
    request.fakeWorkMs += performance.now() - serving;
    const message = anthropicMessageBody(served.step, ids, served.usage);
    request.reportedUsage = message.usage as Record<string, unknown>;
    if (!request.stream) return sendJsonMaybeTruncated(res, served.step, message);
    return streamSse(res, served.step, ids, served.usage);
  }

  async function streamSse(
    res: ServerResponse,
    step: FakeMessageStep,
    ids: { messageId: string; model: string },
    usage: FakeUsage,
  ): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': `req_${ids.messageId}`,
    });
    const events = anthropicSseEvents(step, ids, usage);
    for (let sent = 0; sent < events.length; sent++) {
      if (step.streamError && sent === step.streamError.afterEvents) {
        const { errorType, message } = step.streamError;
        res.end(sseText({ event: 'error', data: anthropicErrorBody(errorType, message) }));
        return;
      }
      if (step.truncateAfterEvents !== undefined && sent === step.truncateAfterEvents) return destroyAfterFlush(res);
      if (sent > 0) await wait(step.eventDelayMs ?? 0);
      if (closed || res.destroyed) return;
      res.write(sseText(events[sent]!));
    }
    res.end();
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, {}, anthropicErrorBody('api_error', `fake-anthropic crashed: ${String(err)}`));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-fake-key' },
    requests,
    unexpected,
    overflowed,
    invalid,
    interrupted,
    setTokenLimit: (tokens, limits = {}) => {
      tokenLimit = tokens;
      countMaxTokens = limits.countMaxTokens ?? countMaxTokens;
    },
    clearPromptCache: () => {
      promptCache.clear();
      openAiCache.clear();
    },
    setCacheMinTokens: (tokens) => void (promptCache.minTokens = tokens),
    setOpenAiQuirks: (quirks) => void (openAiQuirks = quirks),
    enqueue: (...steps) => void script.push(...steps),
    pendingSteps: () => script.length,
    respondWith: (next) => void (responder = next),
    assertScriptConsumed() {
      // Keel must never send what the real API refuses outright.
      if (invalid.length > 0)
        throw new Error(
          `fake-anthropic: ${invalid.length} request(s) broke the API's rules, first: ${invalid[0]!.problem}`,
        );
      if (unexpected.length > 0) {
        const paths = unexpected.map((r) => `#${r.index} ${r.method} ${r.path}`).join(', ');
        throw new Error(`${EXHAUSTED}: ${unexpected.length} request(s) had no scripted step: ${paths}`);
      }
      if (script.length > 0) throw new Error(`fake-anthropic: ${script.length} scripted step(s) were never requested`);
    },
    waitForRequests(count, timeoutMs = WAIT_FOR_REQUESTS_TIMEOUT_MS) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (requests.length < count) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(`fake-anthropic: expected ${count} request(s), got ${requests.length} within ${timeoutMs} ms`),
          );
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          arrivalWaiters.delete(check);
        };
        arrivalWaiters.add(check);
        check();
      });
    },
    async close() {
      closed = true;
      for (const entry of timers) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

/**
 * A reply's usage with what the prompt cache served, where the API reports it: at the top level, or,
 * when the provider compacted, in the compaction iteration (it read the prompt; the top level counts
 * only the reply's own iteration, which read the compacted one).
 */
function withCacheUsage(
  step: FakeMessageStep,
  rawBody: string,
  cache: FakeCacheUsage,
): { step: FakeMessageStep; usage: FakeUsage } {
  const [first, ...rest] = step.iterations ?? [];
  if (first?.type !== 'compaction') return { step, usage: fakeUsage(step, rawBody, cache) };
  const usage = fakeUsage(step, rawBody);
  // The compaction read the whole request, counted as the top level counts a prompt.
  const prompt = Math.max(1, Math.ceil(rawBody.length / 4));
  const compaction = {
    ...first,
    ...cache,
    input_tokens: Math.max(0, prompt - cache.cache_read_input_tokens - cache.cache_creation_input_tokens),
  };
  const reply = rest.map((i) =>
    i.type === 'message' ? { ...i, input_tokens: usage.input_tokens, output_tokens: usage.output_tokens } : i,
  );
  return { step: { ...step, iterations: [compaction, ...reply] }, usage };
}

/** The paused reply of a server compaction: the block alone, stop reason `compaction`, its iteration's usage. */
function compactionStep(plan: FakeContextManagementPlan): FakeMessageStep {
  const c = plan.compaction!;
  const output = Math.ceil(c.content.length / 4);
  return {
    kind: 'message',
    content: [
      { type: 'compaction', content: c.content, encrypted_content: c.encrypted_content, signature: c.signature },
    ],
    stopReason: 'compaction',
    // The compaction iteration is not counted in the top-level usage.
    usage: { input_tokens: 0, output_tokens: 0 },
    iterations: [
      {
        type: 'compaction',
        input_tokens: c.inputTokens,
        output_tokens: output,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: null,
      },
    ],
    contextManagement: { applied_edits: plan.appliedEdits },
  };
}

/**
 * A reply to a request with thinking enabled starts with a signed thinking block, as the API's
 * does, unless the script wrote its own: the next request of a tool loop must send it back.
 */
function withThinking(
  step: FakeStep | undefined,
  body: FakeRequestBody,
  api: string,
  index: number,
): FakeStep | undefined {
  const thinking = body.thinking as { type?: string } | undefined;
  if (api !== 'anthropic' || thinking?.type !== 'enabled' || !step || step.kind !== 'message') return step;
  if (step.content[0]?.type === 'thinking') return step;
  const block = { type: 'thinking' as const, thinking: 'Thinking it over.', signature: `fake-signature-${index}` };
  return { ...step, content: [block, ...step.content] };
}

/** A scripted reply to a request with context management: the edits it applied, and a compaction that did not pause before it. */
function withContextManagement(
  step: FakeStep | undefined,
  plan: FakeContextManagementPlan | undefined,
): FakeStep | undefined {
  if (!step || !plan || step.kind !== 'message') return step;
  const compaction = plan.compaction ? compactionStep(plan) : undefined;
  return {
    ...step,
    content: [...(compaction?.content ?? []), ...step.content],
    contextManagement: { applied_edits: plan.appliedEdits },
    ...(compaction
      ? { iterations: [...compaction.iterations!, { type: 'message', input_tokens: 0, output_tokens: 0 }] }
      : {}),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendError(res: ServerResponse, step: FakeErrorStep, api: 'anthropic' | 'openai'): void {
  const headers: Record<string, string> = {
    ...(step.retryAfter !== undefined ? { 'retry-after': step.retryAfter } : {}),
    ...step.headers,
  };
  sendJson(
    res,
    step.status,
    headers,
    api === 'openai' ? openAiErrorBody(step) : anthropicErrorBody(step.errorType, step.message),
  );
}

/** Sends the JSON body, or (for a truncating step) half of it under the full content-length, then cuts. */
function sendJsonMaybeTruncated(res: ServerResponse, step: FakeMessageStep, body: unknown): void {
  if (step.truncateAfterEvents === undefined) return sendJson(res, 200, {}, body);
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.write(text.slice(0, Math.floor(text.length / 2)), () => res.destroy());
}

/** Lets written bytes reach the client before the socket dies, so the cut is mid-body, not before it. */
function destroyAfterFlush(res: ServerResponse): void {
  res.write('', () => res.destroy());
}
