/**
 * The fake refuses tool schemas and cache_control use the way the Messages API does, and reports
 * prompt-cache reads and writes only for prefixes repeated byte for byte.
 */
import Anthropic from '@anthropic-ai/sdk';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';

describe('the fake Messages API is strict about tools and cache_control', () => {
  let fake: FakeAnthropic;
  let sdk: Anthropic;

  beforeEach(async () => {
    fake = await startFakeAnthropic({ cacheMinTokens: 50 });
    sdk = new Anthropic({ apiKey: 'sk-ant-test', baseURL: fake.url, maxRetries: 0 });
  });
  afterEach(async () => {
    await fake.close();
  });

  const post = async (body: Record<string, unknown>): Promise<{ status: number; message: string }> => {
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { error?: { message: string } };
    return { status: res.status, message: json.error?.message ?? '' };
  };
  const base = { model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

  it('refuses a custom tool whose input_schema is missing, not an object schema, or a top-level union', async () => {
    expect(await post({ ...base, tools: [{ name: 'a', description: 'x' }] })).toEqual({
      status: 400,
      message: 'tools.0.custom.input_schema: Field required',
    });
    expect(
      await post({
        ...base,
        tools: [
          { name: 'a', input_schema: { type: 'object' } },
          { name: 'b', input_schema: {} },
        ],
      }),
    ).toEqual({
      status: 400,
      message: 'tools.1.custom.input_schema.type: Field required',
    });
    expect(await post({ ...base, tools: [{ name: 'a', input_schema: { type: 'string' } }] })).toEqual({
      status: 400,
      message: "tools.0.custom.input_schema.type: Input should be 'object'",
    });
    expect(
      (await post({ ...base, tools: [{ name: 'a', input_schema: { anyOf: [{ type: 'object' }] } }] })).message,
    ).toBe('tools.0.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level');
    expect(fake.invalid).toHaveLength(4);
  });

  it('refuses more than 4 cache_control blocks with the API wording', async () => {
    const marked = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });
    const five = {
      ...base,
      system: [marked('s1'), marked('s2')],
      messages: [{ role: 'user', content: [marked('a'), marked('b'), marked('c')] }],
    };
    expect(await post(five)).toEqual({
      status: 400,
      message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    });
    fake.enqueue(fakeReply.text('ok'));
    const four = { ...five, messages: [{ role: 'user', content: [marked('a'), marked('b')] }] };
    expect((await post(four)).status).toBe(200);
  });

  it('reads a cached prefix only when it repeats byte for byte, and reports it apart from input_tokens', async () => {
    fake.respondWith(() => fakeReply.text('ok'));
    const system: Anthropic.TextBlockParam[] = [
      { type: 'text', text: 'You are a careful assistant. '.repeat(20), cache_control: { type: 'ephemeral' } },
    ];
    const ask = (systemText: Anthropic.TextBlockParam[], question: string) =>
      sdk.messages.create({
        model: 'claude-x',
        max_tokens: 10,
        system: systemText,
        messages: [{ role: 'user', content: question }],
      });

    const first = await ask(system, 'one');
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(100);
    const second = await ask(system, 'two');
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens).toBe(
      Math.ceil(fake.requests[1]!.rawBody.length / 4) - second.usage.cache_read_input_tokens!,
    );
    // One character changed in the prefix: a miss, written anew.
    const changed = await ask([{ ...system[0]!, text: `${system[0]!.text}.` }], 'three');
    expect(changed.usage.cache_read_input_tokens).toBe(0);
    expect(changed.usage.cache_creation_input_tokens).toBeGreaterThan(100);
    // Below the model's minimum cacheable length nothing is cached.
    fake.setCacheMinTokens(10_000);
    fake.clearPromptCache();
    await ask(system, 'four');
    expect((await ask(system, 'five')).usage.cache_read_input_tokens).toBe(0);
    fake.respondWith(undefined);
  });

  it('finds a prefix written at an earlier breakpoint up to 20 blocks back, as the API looks back', async () => {
    fake.respondWith(() => fakeReply.text('ok'));
    const text = (t: string, mark = false): Anthropic.TextBlockParam => ({
      type: 'text',
      text: t,
      ...(mark ? { cache_control: { type: 'ephemeral' as const } } : {}),
    });
    const long = 'context '.repeat(60);
    const first = await sdk.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: [text(long, true)] }],
    });
    const later = await sdk.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [
        { role: 'user', content: [text(long)] },
        { role: 'assistant', content: [text('noted')] },
        { role: 'user', content: [text('and more', true)] },
      ],
    });
    expect(later.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(later.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    fake.respondWith(undefined);
  });
  it('refuses a thinking-enabled tool loop that drops the signed thinking, and a budget the API does not accept', async () => {
    fake.respondWith(() => fakeReply.text('ok'));
    const tool = { name: 'look', input_schema: { type: 'object' } };
    const call = { type: 'tool_use', id: 'toolu_1', name: 'look', input: {} };
    const loop = (assistant: object[]) => ({
      model: 'claude-x',
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [tool],
      messages: [
        { role: 'user', content: 'look' },
        { role: 'assistant', content: assistant },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'seen' }] },
      ],
    });
    const dropped = await post(loop([call]));
    expect(dropped.status).toBe(400);
    expect(dropped.message).toMatch(
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`\. When `thinking` is enabled, a final `assistant` message must start with a thinking block/,
    );
    expect(await post(loop([{ type: 'thinking', thinking: 'hmm', signature: '' }, call]))).toEqual({
      status: 400,
      message: 'messages.1.content.0.thinking.signature: Field required',
    });
    expect((await post(loop([{ type: 'thinking', thinking: 'hmm', signature: 'sig-1' }, call]))).status).toBe(200);
    // Without thinking the same loop may drop it; a new user message after a finished turn may too.
    expect((await post({ ...loop([call]), thinking: undefined })).status).toBe(200);
    const budget = { ...base, max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 512 } };
    expect((await post(budget)).message).toBe(
      'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
    );
    expect((await post({ ...budget, thinking: { type: 'enabled', budget_tokens: 2000 } })).message).toMatch(
      /^`max_tokens` must be greater than `thinking.budget_tokens`/,
    );
    expect(
      (await post({ ...base, max_tokens: 2000, temperature: 0.2, thinking: { type: 'enabled', budget_tokens: 1024 } }))
        .message,
    ).toMatch(/^`temperature` may only be set to 1 when thinking is enabled/);
    expect(fake.invalid).toHaveLength(5);
  });
});
