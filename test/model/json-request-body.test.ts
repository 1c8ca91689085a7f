/**
 * Keel writes a model request's JSON itself, keeping each shared message's encoding (issue 20).
 * What it sends must be exactly what `JSON.stringify` (the SDK's own encoder) would have sent.
 */
import fc from 'fast-check';
import type { AgentMessage, AssistantMessage } from '../../src/context/types';
import { AnthropicModelClient } from '../../src/model/anthropic-client';
import { toAnthropicParams } from '../../src/model/anthropic-convert';
import { toAnthropicBetaParams } from '../../src/model/anthropic-context-management';
import { jsonRequestBody } from '../../src/model/json-request-body';
import { OpenAiCompatibleModelClient } from '../../src/model/openai-compatible-client';
import { toChatMessages } from '../../src/model/openai-compatible-convert';
import type { ModelRequest } from '../../src/model/model-client';
import { fakeReply, startFakeAnthropic } from '../../src/testing';

const sdkBody = (params: object) => JSON.stringify({ ...params, stream: true });
const keelBody = (params: { messages: readonly object[] }) =>
  jsonRequestBody({ ...params, stream: true }).toString('utf8');

/** A window of user turns, tool rounds and replies, with text that JSON must escape. */
const windowArb = fc
  .array(
    fc.record({
      ask: fc.string({ unit: 'binary', maxLength: 40 }),
      tool: fc.option(
        fc.record({
          path: fc.string({ maxLength: 12 }),
          result: fc.string({ unit: 'grapheme', maxLength: 30 }),
          isError: fc.boolean(),
        }),
        { nil: undefined },
      ),
      reply: fc.string({ maxLength: 30 }),
    }),
    { minLength: 1, maxLength: 12 },
  )
  .map((turns) =>
    turns.flatMap((t, i): AgentMessage[] => {
      const round: AgentMessage[] = [{ role: 'user', content: t.ask }];
      if (t.tool) {
        const call: AssistantMessage = {
          role: 'assistant',
          content: [{ type: 'toolCall', id: `toolu_${i}`, name: 'read_file', arguments: { path: t.tool.path } }],
          stopReason: 'toolUse',
        };
        round.push(call, {
          role: 'toolResult',
          toolCallId: `toolu_${i}`,
          toolName: 'read_file',
          content: [{ type: 'text', text: t.tool.result }],
          isError: t.tool.isError,
        });
      }
      round.push({ role: 'assistant', content: [{ type: 'text', text: t.reply }], stopReason: 'stop' });
      return round;
    }),
  );

describe('jsonRequestBody', () => {
  it('is byte for byte the JSON the SDK would send, call after call on the same (growing) window', () => {
    fc.assert(
      fc.property(windowArb, fc.string({ maxLength: 20 }), fc.boolean(), (window, next, promptCaching) => {
        const request = (messages: AgentMessage[]): ModelRequest => ({
          model: 'claude-test',
          system: 'Be brief.',
          messages,
          maxTokens: 64,
          promptCaching,
          tools: [
            { name: 'read_file', description: 'Read', inputSchema: { properties: { path: { type: 'string' } } } },
          ],
        });
        const first = toAnthropicParams(request(window));
        expect(keelBody(first)).toBe(sdkBody(first));
        // The next call shares every earlier conversion (their JSON is reused) and moves the cache markers.
        const second = toAnthropicParams(request([...window, { role: 'user', content: next }]));
        expect(keelBody(second)).toBe(sdkBody(second));
        // The chat-completions shape, the same way.
        const chat = {
          model: 'llama3.2',
          messages: toChatMessages('Be brief.', [...window, { role: 'user', content: next }]),
          max_tokens: 64,
        };
        expect(keelBody(chat)).toBe(sdkBody(chat));
      }),
      { numRuns: 150 },
    );
  });

  it('is what the fake server receives through the real SDK, on both endpoints', async () => {
    const fake = await startFakeAnthropic();
    try {
      const client = new AnthropicModelClient({ apiKey: 'sk-ant-test', baseURL: fake.url });
      const messages: AgentMessage[] = [
        { role: 'user', content: 'read "a" please\u0000' },
        {
          role: 'assistant',
          content: [{ type: 'toolCall', id: 'toolu_1', name: 'read_file', arguments: { path: 'a' } }],
          stopReason: 'toolUse',
        },
        {
          role: 'toolResult',
          toolCallId: 'toolu_1',
          toolName: 'read_file',
          content: [{ type: 'text', text: 'line 1\nline 2 \u2028 done' }],
          isError: false,
        },
      ];
      const plain: ModelRequest = {
        model: 'claude-test',
        system: 'Be brief.',
        messages,
        maxTokens: 64,
        promptCaching: true,
      };
      const beta: ModelRequest = { ...plain, contextManagement: { clearToolUses: {} } };
      fake.enqueue(fakeReply.text('one'), fakeReply.text('two'), fakeReply.text('three'));
      await client.complete(plain);
      await client.complete(beta);
      await new OpenAiCompatibleModelClient({ baseUrl: `${fake.url}/v1`, model: 'llama3.2' }).complete(plain);
      const [sentPlain, sentBeta, sentChat] = fake.requests;
      expect(sentPlain!.headers['content-type']).toBe('application/json');
      expect(sentPlain!.rawBody).toBe(sdkBody(toAnthropicParams(plain)));
      expect(sentBeta!.path).toBe('/v1/messages');
      expect(String(sentBeta!.headers['anthropic-beta'])).toContain('context-management');
      const { betas: _betas, ...betaBody } = toAnthropicBetaParams(toAnthropicParams(beta), beta);
      // `betas` travels as a header, never in the body.
      expect(sentBeta!.rawBody).toBe(sdkBody(betaBody));
      expect(sentChat!.path).toBe('/v1/chat/completions');
      expect(sentChat!.headers['content-type']).toBe('application/json');
      expect(JSON.parse(sentChat!.rawBody)).toMatchObject({
        model: 'llama3.2',
        stream: true,
        messages: JSON.parse(JSON.stringify(toChatMessages('Be brief.', messages))),
      });
    } finally {
      await fake.close();
    }
  });
});
