/**
 * A registry's tools reach both providers with the JSON Schema of their zod input, and a tool the
 * model could not call (input that is not an object, or not expressible as JSON) is refused when it
 * is registered, naming the tool.
 */
import { z } from 'zod';
import { AnthropicModelClient } from '../../src/model/anthropic-client';
import { OpenAiCompatibleModelClient } from '../../src/model/openai-compatible-client';
import { ToolRegistry } from '../../src/tools/registry';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';

const expectedSchema = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    days: { type: 'integer', minimum: 1, maximum: 7, default: 3 },
  },
  required: ['city'],
};

function weatherTools(): ToolRegistry {
  return new ToolRegistry().register({
    name: 'forecast',
    description: 'Weather forecast',
    input: z.object({ city: z.string().describe('City name'), days: z.number().int().min(1).max(7).default(3) }),
    run: async () => 'sunny',
  });
}

describe('tool schemas on the wire', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => fake.close());
  afterEach(() => fake.assertScriptConsumed());

  const request = (tools: ToolRegistry) => ({
    model: 'm',
    maxTokens: 10,
    messages: [{ role: 'user' as const, content: 'weather?' }],
    tools: tools.modelTools(),
  });

  it('Anthropic gets input_schema, the OpenAI-compatible endpoint gets function.parameters, both the zod-derived schema', async () => {
    fake.enqueue(fakeReply.text('a'), fakeReply.text('b'));
    const tools = weatherTools();
    await new AnthropicModelClient({ apiKey: 'k', baseURL: fake.url }).complete(request(tools));
    await new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1`, model: 'm' }).complete(request(tools));
    const [anthropic, openai] = fake.requests.slice(-2);
    expect(anthropic!.body.tools).toEqual([
      { name: 'forecast', description: 'Weather forecast', input_schema: expectedSchema },
    ]);
    expect(openai!.body.tools).toEqual([
      { type: 'function', function: { name: 'forecast', description: 'Weather forecast', parameters: expectedSchema } },
    ]);
  });

  it('computes the list once per registry and again after a registration', () => {
    const tools = weatherTools();
    expect(tools.modelTools()).toBe(tools.modelTools());
    const before = tools.modelTools();
    tools.register({ name: 'now', description: 'Time', input: z.object({}), run: async () => 'noon' });
    expect(tools.modelTools()).not.toBe(before);
    expect(tools.modelTools().map((t) => t.name)).toEqual(['forecast', 'now']);
  });

  it('refuses a tool whose input is not an object, or has no JSON Schema, naming the tool and the fix', () => {
    const run = async () => '';
    expect(() => new ToolRegistry().register({ name: 'echo', description: '', input: z.string(), run })).toThrow(
      'tool "echo": input must be a z.object(...) (the model sends a tool\'s input as a JSON object), got JSON Schema type "string"',
    );
    expect(() =>
      new ToolRegistry().register({ name: 'when', description: '', input: z.object({ at: z.date() }), run }),
    ).toThrow(
      /tool "when": its input cannot be described as JSON Schema \(Date cannot be represented in JSON Schema\); use types the model can send as JSON/,
    );
  });
});
