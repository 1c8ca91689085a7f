/**
 * The fake server itself: wire shapes the real SDK accepts, loud failure, and use from another process.
 */
import Anthropic from '@anthropic-ai/sdk';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';

const run = promisify(execFile);

/** Event names of an SSE body, in order. */
function sseEventNames(body: string): string[] {
  return [...body.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]!);
}

describe('startFakeAnthropic', () => {
  let fake: FakeAnthropic;
  let sdk: Anthropic;

  beforeEach(async () => {
    fake = await startFakeAnthropic();
    sdk = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.url, maxRetries: 0 });
  });
  afterEach(async () => {
    await fake.close();
  });

  const post = (body: Record<string, unknown>, path = '/v1/messages'): Promise<Response> =>
    fetch(`${fake.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('refuses broken tool pairing as the real API does, on every request, before any step is used', async () => {
    fake.enqueue(fakeReply.text('fine'));
    const orphanUse = post({
      model: 'claude-x',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'list /' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'ls', input: {} }] },
        { role: 'user', content: 'and then?' },
      ],
    });
    const orphanResult = post({
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_7', content: 'x' }] }],
    });
    const [use, result] = await Promise.all([orphanUse, orphanResult]);
    expect(use.status).toBe(400);
    expect(((await use.json()) as { error: { message: string } }).error.message).toContain(
      '`tool_use` ids were found without `tool_result` blocks immediately after: toolu_9',
    );
    expect(result.status).toBe(400);
    expect(((await result.json()) as { error: { message: string } }).error.message).toContain(
      'unexpected `tool_use_id` found in `tool_result` blocks: toolu_7',
    );
    expect(fake.invalid).toHaveLength(2);
    expect(() => fake.assertScriptConsumed()).toThrow(/broke the API's rules/);
    // A well-paired request is answered with the scripted step.
    const ok = await sdk.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'list /' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'ls', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'a b' }] },
      ],
    });
    expect(ok.content).toEqual([{ type: 'text', text: 'fine' }]);
  });

  it('refuses an OpenAI-compatible request whose tool message answers no tool call', async () => {
    const response = await post(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_1', content: 'x' },
        ],
      },
      '/v1/chat/completions',
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
    );
  });

  it('answers a non-streaming request with a Message the SDK parses, usage estimated from the body', async () => {
    fake.enqueue(fakeReply.toolUse([{ id: 'toolu_1', name: 'ls', input: { dir: '/' } }], { text: 'Listing.' }));
    const message = await sdk.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'list /' }],
    });
    expect(message.content).toEqual([
      { type: 'text', text: 'Listing.' },
      { type: 'tool_use', id: 'toolu_1', name: 'ls', input: { dir: '/' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.model).toBe('claude-x');
    expect(message.usage.input_tokens).toBe(Math.ceil(fake.requests[0]!.rawBody.length / 4));
    expect(fake.requests[0]!.stream).toBe(false);
  });

  it('streams the real event sequence', async () => {
    fake.enqueue(fakeReply.toolUse([{ id: 'toolu_1', name: 'ls', input: { dir: '/' } }], { text: 'One two' }));
    const response = await post({ model: 'm', max_tokens: 5, stream: true, messages: [] });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(sseEventNames(await response.text())).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('sends the Anthropic error body shape and the retry-after header', async () => {
    fake.enqueue(fakeReply.overloaded({ retryAfter: 5 }));
    const response = await post({ model: 'm', max_tokens: 5, messages: [] });
    expect(response.status).toBe(529);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
  });

  it('words an overflow as the API does', async () => {
    fake.enqueue(fakeReply.overflow(250_000, 200_000));
    const response = await post({ model: 'm', max_tokens: 5, messages: [] });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' },
    });
  });

  it.each([
    [{ model: 'claude-sonnet-4-6' }, 'max_tokens: Field required'],
    [{ model: 'claude-sonnet-4-6', max_tokens: 0 }, 'max_tokens: Input should be greater than or equal to 1'],
    [
      { model: 'claude-sonnet-4-6', max_tokens: 64_001 },
      'max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-6',
    ],
    [
      { model: 'claude-opus-4-1', max_tokens: 32_001 },
      'max_tokens: 32001 > 32000, which is the maximum allowed number of output tokens for claude-opus-4-1',
    ],
  ])('refuses %j as the API does, by default and before any step is used', async (fields, message) => {
    fake.enqueue(fakeReply.text('never sent'));
    const response = await post({ ...fields, messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message } });
    expect(fake.invalid.map((i) => i.problem)).toEqual([message]);
    expect(fake.pendingSteps()).toBe(1);
  });

  it('refuses by default a prompt that leaves no room in the 200,000-token window for max_tokens', async () => {
    const text = 'x'.repeat(4 * 190_000);
    const response = await post({
      model: 'claude-sonnet-4-6',
      max_tokens: 20_000,
      messages: [{ role: 'user', content: text }],
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { type: string; message: string } };
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(
      /^input length and `max_tokens` exceed context limit: \d+ \+ 20000 > 200000, decrease input length or `max_tokens` and try again$/,
    );
    expect(fake.overflowed).toHaveLength(1);
    // The same prompt with room for the reply is answered.
    fake.enqueue(fakeReply.text('fits'));
    const fits = await sdk.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 4_096,
      messages: [{ role: 'user', content: text }],
    });
    expect(fits.content).toEqual([{ type: 'text', text: 'fits' }]);
  });

  it('cuts a non-streaming body halfway when told to truncate', async () => {
    fake.enqueue(fakeReply.truncated('never whole'));
    await expect(
      sdk.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toThrow();
  });

  it('holds the response for delayMs, with the request already recorded', async () => {
    fake.enqueue(fakeReply.text('late', { delayMs: 300 }));
    let settled = false;
    const call = post({ model: 'm', max_tokens: 5, messages: [] }).then((r) => ((settled = true), r.json()));
    await fake.waitForRequests(1);
    expect(settled).toBe(false);
    expect(await call).toMatchObject({ content: [{ type: 'text', text: 'late' }] });
  });

  it('spaces stream events by eventDelayMs, so a client sees the first event long before the rest', async () => {
    fake.enqueue(fakeReply.text('a b c', { eventDelayMs: 60_000 }));
    const response = await post({ model: 'm', max_tokens: 5, stream: true, messages: [] });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(sseEventNames(first)).toEqual(['message_start']);
    await reader.cancel();
  });

  it('fails loudly when the script is exhausted and records the request', async () => {
    const response = await post({ model: 'm', max_tokens: 5, messages: [] });
    expect(response.status).toBe(500);
    expect(JSON.stringify(await response.json())).toContain('fake-anthropic: script exhausted');
    expect(fake.unexpected.map((r) => r.index)).toEqual([0]);
    expect(() => fake.assertScriptConsumed()).toThrow(/script exhausted/);
  });

  it('reports scripted steps that were never requested', () => {
    fake.enqueue(fakeReply.text('unused'));
    expect(fake.pendingSteps()).toBe(1);
    expect(() => fake.assertScriptConsumed()).toThrow(/never requested/);
  });

  it('answers unknown routes with 404 and counts them as unexpected', async () => {
    const response = await post({}, '/v1/complete');
    expect(response.status).toBe(404);
    expect(fake.unexpected).toHaveLength(1);
  });

  it('renders the same step as an OpenAI chat completion', async () => {
    fake.enqueue(
      fakeReply.toolUse([{ id: 'call_1', name: 'ls', input: { dir: '/' } }], {
        usage: { input_tokens: 7, output_tokens: 2 },
      }),
    );
    const body = await (await post({ model: 'llama', messages: [] }, '/v1/chat/completions')).json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'llama',
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{"dir":"/"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    });
  });

  it('streams the same step as chat.completion.chunk SSE when asked, usage only with stream_options', async () => {
    const step = () =>
      fakeReply.toolUse([{ id: 'call_1', name: 'ls', input: { dir: '/' } }], {
        text: 'Hi there',
        usage: { input_tokens: 7, output_tokens: 2 },
      });
    fake.enqueue(step(), step());
    const payloads = async (body: Record<string, unknown>): Promise<string[]> => {
      const response = await post({ model: 'llama', messages: [], stream: true, ...body }, '/v1/chat/completions');
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      return [...(await response.text()).matchAll(/^data: (.*)$/gm)].map((m) => m[1]!);
    };
    const withUsage = await payloads({ stream_options: { include_usage: true } });
    expect(withUsage.at(-1)).toBe('[DONE]');
    const chunks = withUsage.slice(0, -1).map(
      (p) =>
        JSON.parse(p) as {
          object: string;
          choices: Array<{ delta: any; finish_reason: string | null }>;
          usage?: unknown;
        },
    );
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('')).toBe('Hi there');
    expect(chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []))).toEqual([
      { index: 0, id: 'call_1', type: 'function', function: { name: 'ls', arguments: '' } },
      { index: 0, function: { arguments: '{"dir"' } },
      { index: 0, function: { arguments: ':"/"}' } },
    ]);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    });
    expect((await payloads({})).some((p) => p.includes('"usage"'))).toBe(false);
  });

  it('uses a default responder given at start', async () => {
    const echo = await startFakeAnthropic({
      defaultResponder: (req) => fakeReply.text(`you said ${String(req.body.messages?.[0]?.content)}`),
    });
    try {
      const client = new Anthropic({ apiKey: 'k', baseURL: echo.url, maxRetries: 0 });
      const message = await client.messages.create({
        model: 'm',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'ping' }],
      });
      expect(message.content).toEqual([{ type: 'text', text: 'you said ping' }]);
      echo.assertScriptConsumed();
    } finally {
      await echo.close();
    }
  });

  it('serves another process scripted from this one (as a Temporal worker would use it)', async () => {
    fake.enqueue(fakeReply.text('hello from the fake'));
    const script = `
      const Anthropic = require('@anthropic-ai/sdk').default;
      const client = new Anthropic({ maxRetries: 0 }); // reads ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY
      client.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
        .then((m) => process.stdout.write(m.content[0].text), (e) => { console.error(e); process.exit(1); });
    `;
    const { stdout } = await run(process.execPath, ['-e', script], {
      cwd: process.cwd(),
      env: { ...process.env, ...fake.env },
    });
    expect(stdout).toBe('hello from the fake');
    expect(fake.requests).toHaveLength(1);
    fake.assertScriptConsumed();
  });
});
