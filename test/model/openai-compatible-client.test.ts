/**
 * `OpenAiCompatibleModelClient` against the fake server's chat-completions endpoint (streamed by
 * default), plus a bare HTTP server for what the fake does not send (a JSON answer to a stream
 * request, streams without `[DONE]` or tool-call indexes).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentMessage } from '../../src/context/types';
import {
  ContextOverflowError,
  ModelAuthError,
  ModelCallAbortedError,
  ModelOverloadedError,
  ModelRateLimitedError,
  ModelServerError,
  ModelTimeoutError,
  ModelTruncatedResponseError,
} from '../../src/model/errors';
import { MODEL_FAILURE_TYPES, toActivityFailure } from '../../src/model/failures';
import type { ModelStreamEvent } from '../../src/model/model-client';
import { chatCompletionsUrl, OpenAiCompatibleModelClient } from '../../src/model/openai-compatible-client';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';

const conversation: AgentMessage[] = [
  { role: 'user', content: 'summarize' },
  {
    role: 'assistant',
    content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a' } }],
    stopReason: 'toolUse',
  },
  {
    role: 'toolResult',
    toolCallId: 'c1',
    toolName: 'read',
    content: [{ type: 'text', text: 'file text' }],
    details: { raw: 'private-bytes' },
  },
];

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

describe('OpenAiCompatibleModelClient', () => {
  let fake: FakeAnthropic;
  let client: OpenAiCompatibleModelClient;

  beforeEach(async () => {
    fake = await startFakeAnthropic();
    client = new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1`, model: 'llama3.2' });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('streams chat messages to /v1/chat/completions with its own model: text per chunk, usage from the last chunk', async () => {
    fake.enqueue(fakeReply.text('A short summary.', { usage: { input_tokens: 40, output_tokens: 4 } }));
    const texts: Array<[string, string]> = [];
    const events: ModelStreamEvent['type'][] = [];
    const reply = await client.complete(
      { model: 'claude-main', system: 'You summarize.', messages: conversation, maxTokens: 500 },
      { onText: (delta, soFar) => texts.push([delta, soFar]), onEvent: (e) => events.push(e.type) },
    );
    expect(reply).toEqual({
      content: [{ type: 'text', text: 'A short summary.' }],
      stopReason: 'stop',
      usage: { input: 40, output: 4, cacheRead: 0, cacheWrite: 0 },
      model: 'llama3.2',
    });
    expect(texts).toEqual([
      ['A ', 'A '],
      ['short ', 'A short '],
      ['summary.', 'A short summary.'],
    ]);
    expect(events).toEqual(['messageStart', 'text', 'text', 'text', 'messageStop']);
    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({
      model: 'llama3.2',
      max_tokens: 500,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'You summarize.' },
        { role: 'user', content: 'summarize' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'file text' },
      ],
    });
    expect(sent.rawBody).not.toContain('private-bytes');
    fake.assertScriptConsumed();
  });

  it('reports the prompt tokens the server read from its prompt cache apart from the uncached ones', async () => {
    const model = client;
    fake.respondWith(() => fakeReply.text('ok'));
    // Over 1024 tokens as the fake counts them: its cache keeps the prefix, and a repeat reads it.
    const long: AgentMessage[] = [{ role: 'user', content: `Here is the log: ${'line of log text '.repeat(400)}` }];
    const first = await model.complete({ model: 'x', system: 'You read logs.', messages: long, maxTokens: 20 });
    const second = await model.complete({
      model: 'x',
      system: 'You read logs.',
      messages: [
        ...long,
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }], stopReason: 'stop' },
        { role: 'user', content: 'and now?' },
      ],
      maxTokens: 20,
    });
    fake.respondWith(undefined);
    const [one, two] = fake.requests.map(
      (r) => r.reportedUsage as { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } },
    );
    expect(one!.prompt_tokens_details.cached_tokens).toBe(0);
    expect(first.usage).toMatchObject({ input: one!.prompt_tokens, cacheRead: 0 });
    const cached = two!.prompt_tokens_details.cached_tokens;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect(second.usage).toMatchObject({ input: two!.prompt_tokens - cached, cacheRead: cached, cacheWrite: 0 });
  });

  it('assembles streamed tool calls from their fragments, reporting starts and input', async () => {
    fake.enqueue(
      fakeReply.toolUse(
        [
          { id: 'call_1', name: 'search', input: { q: 'keel', limit: 3 } },
          { id: 'call_2', name: 'read', input: { path: '/a' } },
        ],
        { text: 'Looking.', usage: { input_tokens: 30, output_tokens: 12 } },
      ),
    );
    const events: ModelStreamEvent[] = [];
    const reply = await client.complete(
      {
        model: 'x',
        messages: conversation,
        maxTokens: 50,
        tools: [{ name: 'search', description: 'Search', inputSchema: {} }],
      },
      { onEvent: (e) => events.push(e) },
    );
    expect(reply.stopReason).toBe('toolUse');
    expect(reply.usage).toEqual({ input: 30, output: 12, cacheRead: 0, cacheWrite: 0 });
    expect(reply.content).toEqual([
      { type: 'text', text: 'Looking.' },
      { type: 'toolCall', id: 'call_1', name: 'search', arguments: { q: 'keel', limit: 3 } },
      { type: 'toolCall', id: 'call_2', name: 'read', arguments: { path: '/a' } },
    ]);
    expect(events.filter((e) => e.type === 'toolCallStart')).toEqual([
      { type: 'toolCallStart', id: 'call_1', name: 'search' },
      { type: 'toolCallStart', id: 'call_2', name: 'read' },
    ]);
    expect(events.filter((e) => e.type === 'toolCallInput').length).toBeGreaterThanOrEqual(4);
    expect(fake.requests[0]!.body.tools).toEqual([
      { type: 'function', function: { name: 'search', description: 'Search', parameters: { type: 'object' } } },
    ]);
  });

  it('reports streamed reasoning as thinking events without keeping it in the reply', async () => {
    fake.enqueue(
      fakeReply.message([
        { type: 'thinking', thinking: 'hmm', signature: '' },
        { type: 'text', text: 'ok' },
      ]),
    );
    const events: ModelStreamEvent[] = [];
    const reply = await client.complete(
      { model: 'x', messages: conversation, maxTokens: 50 },
      { onEvent: (e) => events.push(e) },
    );
    expect(events).toContainEqual({ type: 'thinking', delta: 'hmm' });
    expect(reply.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('asks a reasoning server for its effort at the thinking level, without a temperature beside it', async () => {
    fake.enqueue(fakeReply.text('ok'), fakeReply.text('ok'));
    await client.complete({
      model: 'x',
      messages: conversation,
      maxTokens: 50,
      temperature: 0.2,
      thinking: { level: 'high', budgetTokens: 16_384 },
    });
    expect(fake.requests.at(-1)!.body).toMatchObject({ reasoning_effort: 'high' });
    expect(fake.requests.at(-1)!.body.temperature).toBeUndefined();
    await client.complete({ model: 'x', messages: conversation, maxTokens: 50, temperature: 0.2 });
    expect(fake.requests.at(-1)!.body.reasoning_effort).toBeUndefined();
    expect(fake.requests.at(-1)!.body.temperature).toBe(0.2);
  });

  describe('idle timeout instead of a wall clock', () => {
    const slow = (): OpenAiCompatibleModelClient =>
      new OpenAiCompatibleModelClient({
        baseUrl: `${fake.url}/v1`,
        model: 'llama3.2',
        timeoutMs: 300,
        idleTimeoutMs: 300,
      });

    it('a stream that keeps sending succeeds however long it takes in total', async () => {
      // Events 300 ms apart against a 1 s idle timeout and a 1.5 s request timeout: the stream takes
      // several seconds in total and never has one long gap. The margins are wide because a loaded CI
      // machine can hold a response back by a few hundred milliseconds.
      const patient = new OpenAiCompatibleModelClient({
        baseUrl: `${fake.url}/v1`,
        model: 'llama3.2',
        timeoutMs: 1_500,
        idleTimeoutMs: 1_000,
      });
      const words = Array.from({ length: 8 }, (_, i) => `w${i} `);
      fake.enqueue(fakeReply.text(words.join(''), { eventDelayMs: 300 }));
      let beats = 0;
      const started = Date.now();
      const reply = await patient.complete(
        { model: 'x', messages: conversation, maxTokens: 500 },
        { onEvent: () => beats++ },
      );
      expect(reply.content).toEqual([{ type: 'text', text: words.join('') }]);
      expect(beats).toBeGreaterThan(8);
      // The premise, not a timing target: the whole stream outlasted both timeouts.
      expect(Date.now() - started).toBeGreaterThan(1_500);
    });

    it('a stream that stalls fails with a retryable ModelTimeoutError', async () => {
      fake.enqueue(fakeReply.text('one two three', { eventDelayMs: 5_000 }));
      const texts: string[] = [];
      const err = await failure(
        slow().complete({ model: 'x', messages: conversation, maxTokens: 50 }, { onText: (d) => texts.push(d) }),
      );
      expect(err).toBeInstanceOf(ModelTimeoutError);
      expect((err as Error).message).toContain('the model sent nothing for');
      expect(toActivityFailure(err)).toMatchObject({ type: MODEL_FAILURE_TYPES.timeout, nonRetryable: false });
      expect(fake.requests).toHaveLength(1);
    });

    it('a response that never starts fails with ModelTimeoutError', async () => {
      fake.enqueue(fakeReply.text('late', { delayMs: 5_000 }));
      const err = await failure(slow().complete({ model: 'x', messages: conversation, maxTokens: 50 }));
      expect(err).toBeInstanceOf(ModelTimeoutError);
      expect((err as Error).message).toContain('the model did not start answering within');
    });

    it("the caller's abort is still an abort, not a timeout", async () => {
      fake.enqueue(fakeReply.text('one two three', { eventDelayMs: 5_000 }));
      const controller = new AbortController();
      const call = client.complete(
        { model: 'x', messages: conversation, maxTokens: 50 },
        { signal: controller.signal, onEvent: () => controller.abort() },
      );
      expect(await failure(call)).toBeInstanceOf(ModelCallAbortedError);
    });
  });

  it.each<[string, Parameters<FakeAnthropic['enqueue']>[0], new (...args: never[]) => Error]>([
    [
      'an overloaded error inside the stream → overloaded',
      {
        ...fakeReply.text('partial answer here'),
        streamError: { afterEvents: 2, errorType: 'overloaded_error', message: 'Overloaded' },
      },
      ModelOverloadedError,
    ],
    [
      'an overflow error inside the stream → ContextOverflowError',
      {
        ...fakeReply.text('x'),
        streamError: {
          afterEvents: 0,
          errorType: 'invalid_request_error',
          message: 'prompt is too long: 9000 tokens > 8192 maximum',
        },
      },
      ContextOverflowError,
    ],
    [
      'a stream cut after some chunks → truncated',
      fakeReply.truncated('this reply will never finish', 3),
      ModelTruncatedResponseError,
    ],
  ])('%s', async (_what, step, expected) => {
    fake.enqueue(step);
    const err = await failure(client.complete({ model: 'x', messages: conversation, maxTokens: 50 }));
    expect(err).toBeInstanceOf(expected);
    expect(fake.requests).toHaveLength(1);
  });

  it('rethrows an error thrown by onText unchanged', async () => {
    fake.enqueue(fakeReply.text('one two three'));
    const bug = new Error('heartbeat bug');
    const err = await failure(
      client.complete(
        { model: 'x', messages: conversation, maxTokens: 50 },
        {
          onText: () => {
            throw bug;
          },
        },
      ),
    );
    expect(err).toBe(bug);
  });

  it.each<[string, Parameters<FakeAnthropic['enqueue']>[0], new (...args: never[]) => Error]>([
    ['429 → rate limited', fakeReply.rateLimited({ retryAfter: 1 }), ModelRateLimitedError],
    ['500 → server error', fakeReply.serverError(), ModelServerError],
    [
      '400 overflow → ContextOverflowError',
      fakeReply.invalidRequest(
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
      ),
      ContextOverflowError,
    ],
    ['401 → auth error', fakeReply.authError(), ModelAuthError],
    ['a body cut mid-way → truncated', fakeReply.truncated('never whole'), ModelTruncatedResponseError],
  ])('%s, in one HTTP request', async (_what, step, expected) => {
    fake.enqueue(step);
    const err = await failure(client.complete({ model: 'x', messages: conversation, maxTokens: 50 }));
    expect(err).toBeInstanceOf(expected);
    expect(fake.requests).toHaveLength(1);
  });

  it('reads retry-after on a 429', async () => {
    fake.enqueue(fakeReply.rateLimited({ retryAfter: 3 }));
    const err = await failure(client.complete({ model: 'x', messages: conversation, maxTokens: 50 }));
    expect((err as ModelRateLimitedError).retryAfterMs).toBe(3000);
  });

  it('names the endpoint setting in an auth error', async () => {
    fake.enqueue(fakeReply.authError());
    const err = await failure(client.complete({ model: 'x', messages: conversation, maxTokens: 50 }));
    expect((err as Error).message).toContain('KEEL_COMPACTION_MODEL_URL');
  });
});

/** A bare server answering every request with `answer`, for wire shapes the fake does not produce. */
async function serve(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server };
}

describe('OpenAiCompatibleModelClient on other servers', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  const sse = (res: ServerResponse, payloads: unknown[]): void => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // CRLF line ends and a keep-alive comment, as some servers send them.
    res.end(
      ': keep-alive\r\n\r\n' +
        payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\r\n\r\n`).join(''),
    );
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    object: 'chat.completion.chunk',
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  it('reads a JSON answer to a stream request (the server ignored stream: true), reporting the text once', async () => {
    const started = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          model: 'm',
          choices: [{ message: { content: 'whole summary' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 9, completion_tokens: 2 },
        }),
      );
    });
    server = started.server;
    const texts: string[] = [];
    const reply = await new OpenAiCompatibleModelClient({ baseUrl: started.url }).complete(
      { model: 'x', messages: conversation, maxTokens: 50 },
      { onText: (d) => texts.push(d) },
    );
    expect(reply).toEqual({
      content: [{ type: 'text', text: 'whole summary' }],
      stopReason: 'stop',
      usage: { input: 9, output: 2, cacheRead: 0, cacheWrite: 0 },
      model: 'm',
    });
    expect(texts).toEqual(['whole summary']);
  });

  it('accepts a stream that ends after its finish_reason without [DONE], and tool calls without an index', async () => {
    const started = await serve((_req, res) =>
      sse(res, [
        chunk({ role: 'assistant' }),
        chunk({ tool_calls: [{ id: 'a', function: { name: 'f', arguments: '{"x":' } }] }),
        chunk({ tool_calls: [{ function: { arguments: '1}' } }] }),
        chunk({ tool_calls: [{ id: 'b', function: { name: 'g', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    );
    server = started.server;
    const reply = await new OpenAiCompatibleModelClient({ baseUrl: started.url }).complete({
      model: 'x',
      messages: conversation,
      maxTokens: 50,
    });
    expect(reply.stopReason).toBe('toolUse');
    expect(reply.content).toEqual([
      { type: 'toolCall', id: 'a', name: 'f', arguments: { x: 1 } },
      { type: 'toolCall', id: 'b', name: 'g', arguments: {} },
    ]);
    // No usage from the server: Keel's own count, marked as such (never zeros read as a reading).
    expect(reply.usage).toMatchObject({ cacheRead: 0, cacheWrite: 0, estimated: true });
    expect(reply.usage.input).toBeGreaterThan(0);
    expect(reply.usage.output).toBeGreaterThan(0);
  });

  it('a stream that ends with neither a finish_reason nor [DONE] is truncated', async () => {
    const started = await serve((_req, res) => sse(res, [chunk({ content: 'half a' })]));
    server = started.server;
    const err = await failure(
      new OpenAiCompatibleModelClient({ baseUrl: started.url }).complete({
        model: 'x',
        messages: conversation,
        maxTokens: 50,
      }),
    );
    expect(err).toBeInstanceOf(ModelTruncatedResponseError);
  });
});

describe('OpenAiCompatibleModelClient on a local server (llama-cpp-python quirks in the fake)', () => {
  let fake: FakeAnthropic;
  const tools = [
    { name: 'lookup', description: 'Looks a word up.', inputSchema: { properties: { word: { type: 'string' } } } },
  ];
  const ask = (text: string) => ({
    model: 'gemma',
    messages: [{ role: 'user' as const, content: text }],
    maxTokens: 64,
  });

  beforeEach(async () => {
    fake = await startFakeAnthropic();
  });
  afterEach(async () => {
    await fake.close();
  });

  it('reads an empty 200 stream as an overflow: one unstreamed request names it, no retry of the stream', async () => {
    fake.setOpenAiQuirks({ emptyStreamOnOverflow: true });
    fake.setTokenLimit(300);
    const client = new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1` });
    const err = await failure(client.complete(ask('word '.repeat(400))));
    expect(err).toBeInstanceOf(ContextOverflowError);
    expect((err as ContextOverflowError).maxTokens).toBe(300);
    expect((err as ContextOverflowError).promptTokens).toBe(fake.overflowed[1]!.tokens);
    expect(fake.requests.map((r) => r.stream)).toEqual([true, false]);
  });

  it('a stream without usage leaves it unknown: Keel counts it and marks it estimated', async () => {
    fake.setOpenAiQuirks({ noStreamUsage: true });
    fake.enqueue(fakeReply.text('Three words here.'));
    const client = new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1` });
    const reply = await client.complete(ask('Say three words.'));
    expect(fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(fake.requests[0]!.reportedUsage).toBeUndefined();
    expect(reply.usage).toEqual({
      input: expect.any(Number),
      output: expect.any(Number),
      cacheRead: 0,
      cacheWrite: 0,
      estimated: true,
    });
    expect(reply.usage.input).toBeGreaterThan(3);
    // Four words of text, and the message's own framing.
    expect(reply.usage.output).toBeGreaterThanOrEqual(4);
  });

  it('[DONE] without a finish_reason is a cut reply: an interrupted stream is truncated, never complete', async () => {
    fake.setOpenAiQuirks({ interruptOnNewRequest: true });
    fake.respondWith((r) =>
      fakeReply.text(`reply to ${String(r.body.messages!.at(-1)!.content)} in many words`, { eventDelayMs: 20 }),
    );
    const unlimited = new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1`, maxConcurrentRequests: 8 });
    const first = unlimited.complete(ask('one'));
    await fake.waitForRequests(1);
    const second = unlimited.complete(ask('two'));
    const err = await failure(first);
    expect(err).toBeInstanceOf(ModelTruncatedResponseError);
    expect((err as Error).message).toContain('[DONE] but no finish_reason');
    expect((await second).content).toEqual([{ type: 'text', text: 'reply to two in many words' }]);
    expect(fake.interrupted.map((r) => r.index)).toEqual([0]);
  });

  it('queues parallel calls to a loopback endpoint one at a time (its one slot), so none is interrupted', async () => {
    fake.setOpenAiQuirks({ interruptOnNewRequest: true });
    fake.respondWith((r) =>
      fakeReply.text(`reply to ${String(r.body.messages!.at(-1)!.content)}`, { eventDelayMs: 5 }),
    );
    const client = new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1` });
    const replies = await Promise.all(['a', 'b', 'c', 'd'].map((word) => client.complete(ask(word))));
    expect(replies.map((r) => r.content)).toEqual(
      ['a', 'b', 'c', 'd'].map((w) => [{ type: 'text', text: `reply to ${w}` }]),
    );
    expect(fake.requests).toHaveLength(4);
    expect(fake.interrupted).toEqual([]);
  });

  it('a call aborted while it waits for the slot leaves the line unsent', async () => {
    fake.enqueue(fakeReply.text('slow', { delayMs: 300 }), fakeReply.text('next'));
    const client = new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1` });
    const first = client.complete(ask('first'));
    await fake.waitForRequests(1);
    const abort = new AbortController();
    const waiting = client.complete(ask('waiting'), { signal: abort.signal });
    abort.abort();
    expect(await failure(waiting)).toBeInstanceOf(ModelCallAbortedError);
    expect((await first).content).toEqual([{ type: 'text', text: 'slow' }]);
    // The line moved on: the next call is served, and the aborted one never reached the server.
    expect((await client.complete(ask('after'))).content).toEqual([{ type: 'text', text: 'next' }]);
    expect(fake.requests.map((r) => r.body.messages!.at(-1)!.content)).toEqual(['first', 'after']);
  });

  it('sends tool_choice "auto" with tools, so a server whose default is "none" still lets the model call them', async () => {
    fake.setOpenAiQuirks({ toolChoiceDefaultsToNone: true });
    fake.enqueue(
      fakeReply.toolUse([{ id: 'call_keel', name: 'lookup', input: { word: 'keel' } }]),
      fakeReply.text('no tools here'),
    );
    const client = new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1` });
    const reply = await client.complete({ ...ask('look up keel'), tools });
    expect(fake.requests[0]!.body.tool_choice).toBe('auto');
    expect(reply.content).toEqual([
      expect.objectContaining({ type: 'toolCall', name: 'lookup', arguments: { word: 'keel' } }),
    ]);
    await client.complete(ask('and without tools?'));
    expect(fake.requests[1]!.body).not.toHaveProperty('tool_choice');
  });

  it('asks again unstreamed when the server refuses to stream a tool choice, shows the reply whole, and remembers', async () => {
    fake.setOpenAiQuirks({ noStreamingToolChoice: true });
    fake.enqueue(
      fakeReply.text('whole reply'),
      fakeReply.toolUse([{ id: 'call_hull', name: 'lookup', input: { word: 'hull' } }]),
      fakeReply.text('streamed'),
    );
    const client = new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1`, model: 'gemma-learn' });
    const texts: Array<[string, string]> = [];
    const reply = await client.complete({ ...ask('hi'), tools }, { onText: (d, all) => texts.push([d, all]) });
    expect(reply.content).toEqual([{ type: 'text', text: 'whole reply' }]);
    expect(texts).toEqual([['whole reply', 'whole reply']]);
    // Learned for this endpoint and model: the next tool turn is not streamed at all; a turn without tools still is.
    const second = await new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1`, model: 'gemma-learn' }).complete({
      ...ask('look'),
      tools,
    });
    expect(second.stopReason).toBe('toolUse');
    await client.complete(ask('no tools'));
    expect(fake.requests.map((r) => [r.stream, r.body.tools !== undefined])).toEqual([
      [true, true],
      [false, true],
      [false, true],
      [true, false],
    ]);
    fake.assertScriptConsumed();
  });

  it('streamToolTurns: false sends tool turns unstreamed from the first', async () => {
    fake.setOpenAiQuirks({ noStreamingToolChoice: true });
    fake.enqueue(fakeReply.text('whole'));
    const client = new OpenAiCompatibleModelClient({
      baseUrl: `${fake.url}/v1`,
      model: 'gemma-option',
      streamToolTurns: false,
    });
    await client.complete({ ...ask('hi'), tools });
    expect(fake.requests.map((r) => r.stream)).toEqual([false]);
  });
});

describe('chatCompletionsUrl', () => {
  it.each([
    ['http://localhost:11434/v1', 'http://localhost:11434/v1/chat/completions'],
    ['http://localhost:11434/v1/', 'http://localhost:11434/v1/chat/completions'],
    ['http://localhost:8000', 'http://localhost:8000/v1/chat/completions'],
    ['https://gw.example.com/openai/v1/chat/completions', 'https://gw.example.com/openai/v1/chat/completions'],
  ])('%s → %s', (base, url) => {
    expect(chatCompletionsUrl(base)).toBe(url);
  });
});
