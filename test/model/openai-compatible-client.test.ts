import type { AgentMessage } from '../../src/context/types';
import {
  ContextOverflowError,
  ModelAuthError,
  ModelRateLimitedError,
  ModelServerError,
  ModelTruncatedResponseError,
} from '../../src/model/errors';
import { chatCompletionsUrl, OpenAiCompatibleModelClient } from '../../src/model/openai-compatible-client';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';

const conversation: AgentMessage[] = [
  { role: 'user', content: 'summarize' },
  { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a' } }], stopReason: 'toolUse' },
  { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'file text' }], details: { raw: 'private-bytes' } },
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

  it('sends chat messages to /v1/chat/completions with its own model and returns the reply', async () => {
    fake.enqueue(fakeReply.text('A short summary.', { usage: { input_tokens: 40, output_tokens: 4 } }));
    const texts: string[] = [];
    const reply = await client.complete(
      { model: 'claude-main', system: 'You summarize.', messages: conversation, maxTokens: 500 },
      { onText: (_delta, soFar) => texts.push(soFar) },
    );
    expect(reply).toEqual({ content: [{ type: 'text', text: 'A short summary.' }], stopReason: 'stop', usage: { input: 40, output: 4 }, model: 'llama3.2' });
    expect(texts).toEqual(['A short summary.']);
    const sent = fake.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({
      model: 'llama3.2',
      max_tokens: 500,
      stream: false,
      messages: [
        { role: 'system', content: 'You summarize.' },
        { role: 'user', content: 'summarize' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'file text' },
      ],
    });
    expect(sent.rawBody).not.toContain('private-bytes');
    fake.assertScriptConsumed();
  });

  it('parses tool calls into toolCall blocks with arguments', async () => {
    fake.enqueue(fakeReply.toolUse([{ id: 'call_1', name: 'search', input: { q: 'keel' } }]));
    const reply = await client.complete({ model: 'x', messages: conversation, maxTokens: 50, tools: [{ name: 'search', description: 'Search', inputSchema: {} }] });
    expect(reply.stopReason).toBe('toolUse');
    expect(reply.content).toEqual([{ type: 'toolCall', id: 'call_1', name: 'search', arguments: { q: 'keel' } }]);
    expect(fake.requests[0]!.body.tools).toEqual([{ type: 'function', function: { name: 'search', description: 'Search', parameters: { type: 'object' } } }]);
  });

  it.each<[string, Parameters<FakeAnthropic['enqueue']>[0], new (...args: never[]) => Error]>([
    ['429 → rate limited', fakeReply.rateLimited({ retryAfter: 1 }), ModelRateLimitedError],
    ['500 → server error', fakeReply.serverError(), ModelServerError],
    ['400 overflow → ContextOverflowError', fakeReply.invalidRequest("This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."), ContextOverflowError],
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
