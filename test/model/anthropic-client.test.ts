/**
 * The real `@anthropic-ai/sdk`, through `AnthropicModelClient`, against the fake server over HTTP.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { AgentMessage } from '../../src/context/types';
import { AnthropicModelClient } from '../../src/model/anthropic-client';
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
} from '../../src/model/errors';
import { MODEL_FAILURE_TYPES, toActivityFailure } from '../../src/model/failures';
import type { ModelRequest, ModelStreamEvent } from '../../src/model/model-client';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';

const hello: AgentMessage[] = [{ role: 'user', content: 'hello' }];
const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'claude-test',
  messages: hello,
  maxTokens: 256,
  ...overrides,
});

/** Runs a call that must fail and returns what it threw. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

describe('AnthropicModelClient', () => {
  let fake: FakeAnthropic;
  let client: AnthropicModelClient;

  beforeEach(async () => {
    fake = await startFakeAnthropic();
    client = new AnthropicModelClient({ apiKey: 'sk-ant-test', baseURL: fake.url });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('returns a text reply with stop reason, usage and model', async () => {
    fake.enqueue(fakeReply.text('Hello there', { usage: { input_tokens: 12, output_tokens: 3 } }));
    const reply = await client.complete(request({ system: 'Be brief.' }));
    expect(reply).toEqual({
      content: [{ type: 'text', text: 'Hello there' }],
      stopReason: 'stop',
      usage: { input: 12, output: 3, cacheRead: 0, cacheWrite: 0 },
      model: 'claude-test',
    });
    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.stream).toBe(true);
    // This SDK version sends the key as a bearer token; older ones used x-api-key.
    expect(String(sent.headers['x-api-key'] ?? sent.headers.authorization)).toContain('sk-ant-test');
    expect(sent.body).toMatchObject({
      model: 'claude-test',
      max_tokens: 256,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    });
    fake.assertScriptConsumed();
  });

  it('parses tool_use blocks into toolCall blocks with arguments', async () => {
    fake.enqueue(
      fakeReply.toolUse(
        [
          { id: 'toolu_1', name: 'read_file', input: { path: '/etc/hosts', lines: [1, 2] } },
          { id: 'toolu_2', name: 'list_dir', input: {} },
        ],
        { text: 'Let me look.' },
      ),
    );
    const reply = await client.complete(
      request({
        tools: [
          { name: 'read_file', description: 'Reads a file', inputSchema: { properties: { path: { type: 'string' } } } },
        ],
      }),
    );
    expect(reply.stopReason).toBe('toolUse');
    expect(reply.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'toolCall', id: 'toolu_1', name: 'read_file', arguments: { path: '/etc/hosts', lines: [1, 2] } },
      { type: 'toolCall', id: 'toolu_2', name: 'list_dir', arguments: {} },
    ]);
    expect(fake.requests[0]!.body.tools).toEqual([
      {
        name: 'read_file',
        description: 'Reads a file',
        input_schema: { type: 'object', properties: { path: { type: 'string' } } },
      },
    ]);
  });

  it('delivers streamed text deltas to onText in order, with the text so far', async () => {
    fake.enqueue(fakeReply.text('NO_REPLY done', { chunks: ['NO_', 'REPLY', ' done'] }));
    const seen: Array<[string, string]> = [];
    const events: ModelStreamEvent['type'][] = [];
    const reply = await client.complete(request(), {
      onText: (delta, soFar) => seen.push([delta, soFar]),
      onEvent: (e) => events.push(e.type),
    });
    expect(seen).toEqual([
      ['NO_', 'NO_'],
      ['REPLY', 'NO_REPLY'],
      [' done', 'NO_REPLY done'],
    ]);
    expect(events).toEqual(['messageStart', 'text', 'text', 'text', 'messageStop']);
    expect(reply.content).toEqual([{ type: 'text', text: 'NO_REPLY done' }]);
  });

  it('reports tool call starts and input deltas as events', async () => {
    fake.enqueue(fakeReply.toolUse([{ id: 'toolu_9', name: 'search', input: { q: 'keel' } }]));
    const events: ModelStreamEvent[] = [];
    await client.complete(request(), { onEvent: (e) => events.push(e) });
    expect(events[1]).toEqual({ type: 'toolCallStart', id: 'toolu_9', name: 'search' });
    const json = events.flatMap((e) => (e.type === 'toolCallInput' ? [e.partialJson] : [])).join('');
    expect(JSON.parse(json)).toEqual({ q: 'keel' });
  });

  it('keeps signed thinking from the reply', async () => {
    fake.enqueue(
      fakeReply.message([
        { type: 'thinking', thinking: 'hmm', signature: 'sig-1' },
        { type: 'text', text: 'ok' },
      ]),
    );
    const reply = await client.complete(request());
    expect(reply.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'sig-1' },
      { type: 'text', text: 'ok' },
    ]);
  });

  it('maps max_tokens to stop reason length', async () => {
    fake.enqueue(fakeReply.text('cut', { stopReason: 'max_tokens' }));
    expect((await client.complete(request())).stopReason).toBe('length');
  });

  describe('idle timeout: the SDK timeout stops at the headers, the stream is watched instead', () => {
    const slow = (): AnthropicModelClient =>
      new AnthropicModelClient({ apiKey: 'sk-ant-test', baseURL: fake.url, timeoutMs: 300, idleTimeoutMs: 300 });

    it('a stream that keeps sending succeeds however long it takes in total', async () => {
      // Events 300 ms apart against a 1 s idle timeout and a 1.5 s request timeout: several seconds in
      // total, never one long gap. Wide margins: a loaded CI machine can hold a response back.
      const patient = new AnthropicModelClient({
        apiKey: 'sk-ant-test',
        baseURL: fake.url,
        timeoutMs: 1_500,
        idleTimeoutMs: 1_000,
      });
      const words = Array.from({ length: 8 }, (_, i) => `w${i} `);
      fake.enqueue(fakeReply.text(words.join(''), { eventDelayMs: 300 }));
      const started = Date.now();
      const reply = await patient.complete(request());
      expect(reply.content).toEqual([{ type: 'text', text: words.join('') }]);
      // The premise, not a timing target: the whole stream outlasted both timeouts.
      expect(Date.now() - started).toBeGreaterThan(1_500);
    });

    it('a stream that stalls fails with a retryable ModelTimeoutError', async () => {
      fake.enqueue(fakeReply.text('one two three', { eventDelayMs: 5_000 }));
      const err = await failure(slow().complete(request()));
      expect(err).toBeInstanceOf(ModelTimeoutError);
      expect((err as Error).message).toContain('the model sent nothing for');
      expect(toActivityFailure(err)).toMatchObject({ type: MODEL_FAILURE_TYPES.timeout, nonRetryable: false });
      expect(fake.requests).toHaveLength(1);
    });

    it('a response that never starts fails with ModelTimeoutError (the SDK timeout)', async () => {
      fake.enqueue(fakeReply.text('late', { delayMs: 5_000 }));
      expect(await failure(slow().complete(request()))).toBeInstanceOf(ModelTimeoutError);
    });

    it("the caller's abort mid-stream is still an abort, not a timeout", async () => {
      fake.enqueue(fakeReply.text('one two three', { eventDelayMs: 5_000 }));
      const controller = new AbortController();
      const err = await failure(
        slow().complete(request(), { signal: controller.signal, onEvent: () => controller.abort() }),
      );
      expect(err).toBeInstanceOf(ModelCallAbortedError);
    });
  });

  describe('failures (exactly one HTTP request per call: the SDK never retries)', () => {
    it('429 with retry-after → ModelRateLimitedError with retryAfterMs, a retryable failure with nextRetryDelay', async () => {
      fake.enqueue(fakeReply.rateLimited({ retryAfter: 7 }));
      const err = await failure(client.complete(request()));
      expect(err).toBeInstanceOf(ModelRateLimitedError);
      expect((err as ModelRateLimitedError).retryAfterMs).toBe(7000);
      expect((err as ModelRateLimitedError).status).toBe(429);
      const activityFailure = toActivityFailure(err);
      expect(activityFailure).toBeInstanceOf(ApplicationFailure);
      expect(activityFailure.type).toBe(MODEL_FAILURE_TYPES.rateLimited);
      expect(activityFailure.nonRetryable).toBe(false);
      expect(activityFailure.nextRetryDelay).toBe(7000);
      expect(fake.requests).toHaveLength(1);
    });

    it('honours retry-after-ms over retry-after', async () => {
      fake.enqueue(fakeReply.rateLimited({ retryAfter: 30, headers: { 'retry-after-ms': '1500' } }));
      const err = await failure(client.complete(request()));
      expect((err as ModelRateLimitedError).retryAfterMs).toBe(1500);
    });

    it('529 → ModelOverloadedError, retryable', async () => {
      fake.enqueue(fakeReply.overloaded());
      const err = await failure(client.complete(request()));
      expect(err).toBeInstanceOf(ModelOverloadedError);
      const activityFailure = toActivityFailure(err);
      expect(activityFailure.type).toBe(MODEL_FAILURE_TYPES.overloaded);
      expect(activityFailure.nonRetryable).toBe(false);
      expect(activityFailure.nextRetryDelay).toBeUndefined();
      expect(fake.requests).toHaveLength(1);
    });

    it('500 → ModelServerError, retryable', async () => {
      fake.enqueue(fakeReply.serverError({ retryAfter: 2 }));
      const err = await failure(client.complete(request()));
      expect(err).toBeInstanceOf(ModelServerError);
      expect((err as ModelServerError).status).toBe(500);
      expect(toActivityFailure(err)).toMatchObject({
        type: MODEL_FAILURE_TYPES.serverError,
        nonRetryable: false,
        nextRetryDelay: 2000,
      });
      expect(fake.requests).toHaveLength(1);
    });

    it('overflow 400 → ContextOverflowError with tokens, a non-retryable ContextOverflow failure', async () => {
      fake.enqueue(fakeReply.overflow(212_345, 200_000));
      const err = await failure(client.complete(request()));
      expect(err).toBeInstanceOf(ContextOverflowError);
      expect(err).toMatchObject({
        promptTokens: 212_345,
        maxTokens: 200_000,
        providerMessage: 'prompt is too long: 212345 tokens > 200000 maximum',
      });
      const activityFailure = toActivityFailure(err);
      expect(activityFailure.type).toBe('KeelContextOverflow');
      expect(activityFailure.nonRetryable).toBe(true);
      expect(activityFailure.details?.[0]).toMatchObject({ status: 400, promptTokens: 212_345, maxTokens: 200_000 });
      expect(fake.requests).toHaveLength(1);
    });

    it('other 400 → ModelRequestInvalidError, non-retryable', async () => {
      fake.enqueue(fakeReply.invalidRequest('messages.1.content: tool_use ids were found without tool_result blocks'));
      const err = await failure(client.complete(request()));
      expect(err).toBeInstanceOf(ModelRequestInvalidError);
      expect(toActivityFailure(err)).toMatchObject({ type: MODEL_FAILURE_TYPES.requestInvalid, nonRetryable: true });
    });

    it('401 → ModelAuthError naming ANTHROPIC_API_KEY, non-retryable', async () => {
      fake.enqueue(fakeReply.authError());
      const err = await failure(client.complete(request()));
      expect(err).toBeInstanceOf(ModelAuthError);
      expect((err as Error).message).toContain('ANTHROPIC_API_KEY');
      expect((err as Error).message).toContain('ANTHROPIC_BASE_URL');
      const activityFailure = toActivityFailure(err);
      expect(activityFailure).toMatchObject({ type: MODEL_FAILURE_TYPES.auth, nonRetryable: true });
      expect(activityFailure.message).toContain('ANTHROPIC_API_KEY');
      expect(fake.requests).toHaveLength(1);
    });

    it('a stream cut mid-way → ModelTruncatedResponseError (retryable), not a partial success', async () => {
      fake.enqueue(fakeReply.truncated('this reply will never finish', 5));
      const texts: string[] = [];
      const err = await failure(client.complete(request(), { onText: (d) => texts.push(d) }));
      expect(err).toBeInstanceOf(ModelTruncatedResponseError);
      expect(texts.length).toBeGreaterThan(0);
      expect(toActivityFailure(err)).toMatchObject({ type: MODEL_FAILURE_TYPES.truncated, nonRetryable: false });
      expect(fake.requests).toHaveLength(1);
    });

    it('an overloaded_error event inside the stream → ModelOverloadedError', async () => {
      fake.enqueue({
        ...fakeReply.text('partial answer here'),
        streamError: { afterEvents: 4, errorType: 'overloaded_error', message: 'Overloaded' },
      });
      const err = await failure(client.complete(request()));
      expect(err).toBeInstanceOf(ModelOverloadedError);
    });

    it('a refused connection → ModelConnectionError, retryable', async () => {
      const url = fake.url;
      await fake.close();
      fake = await startFakeAnthropic();
      const offline = new AnthropicModelClient({ apiKey: 'sk-ant-test', baseURL: url });
      const err = await failure(offline.complete(request()));
      expect(err).toBeInstanceOf(ModelConnectionError);
      expect(toActivityFailure(err).nonRetryable).toBe(false);
    });

    it('an aborted signal → ModelCallAbortedError', async () => {
      fake.enqueue(fakeReply.text('slow', { delayMs: 5_000 }));
      const controller = new AbortController();
      const call = client.complete(request(), { signal: controller.signal });
      await fake.waitForRequests(1);
      controller.abort();
      expect(await failure(call)).toBeInstanceOf(ModelCallAbortedError);
    });

    it('rethrows an error thrown by onText unchanged', async () => {
      fake.enqueue(fakeReply.text('one two three'));
      const bug = new Error('heartbeat bug');
      const err = await failure(
        client.complete(request(), {
          onText: () => {
            throw bug;
          },
        }),
      );
      expect(err).toBe(bug);
    });
  });

  it('fails loudly when the script is exhausted', async () => {
    const err = await failure(client.complete(request()));
    expect(err).toBeInstanceOf(ModelServerError);
    expect((err as Error).message).toContain('fake-anthropic: script exhausted');
    expect(fake.unexpected).toHaveLength(1);
    expect(() => fake.assertScriptConsumed()).toThrow(/script exhausted/);
  });

  it('answers from the responder once the script runs out', async () => {
    fake.enqueue(fakeReply.text('scripted'));
    fake.respondWith((req) => fakeReply.text(`echo ${req.body.messages?.length ?? 0}`));
    expect((await client.complete(request())).content).toEqual([{ type: 'text', text: 'scripted' }]);
    expect((await client.complete(request())).content).toEqual([{ type: 'text', text: 'echo 1' }]);
    fake.assertScriptConsumed();
  });
});
