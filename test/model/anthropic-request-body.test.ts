/**
 * Keel writes the streamed request's JSON itself, keeping each shared message's encoding (issue 20).
 * What it sends must be exactly what the SDK's own `JSON.stringify` would have sent.
 */
import fc from 'fast-check';
import type { AgentMessage, AssistantMessage } from '../../src/context/types';
import { AnthropicModelClient } from '../../src/model/anthropic-client';
import { toAnthropicParams } from '../../src/model/anthropic-convert';
import { toAnthropicBetaParams } from '../../src/model/anthropic-context-management';
import { streamedRequestBody } from '../../src/model/anthropic-request-body';
import type { ModelRequest } from '../../src/model/model-client';
import { fakeReply, startFakeAnthropic } from '../support/fake-anthropic';

const sdkBody = (params: object) => JSON.stringify({ ...params, stream: true });

/** A window of user turns, tool rounds and replies, with text that JSON must escape. */
const windowArb = fc
  .array(
    fc.record({
      ask: fc.string({ unit: 'binary', maxLength: 40 }),
      tool: fc.option(fc.record({ path: fc.string({ maxLength: 12 }), result: fc.string({ unit: 'grapheme', maxLength: 30 }), isError: fc.boolean() }), { nil: undefined }),
      reply: fc.string({ maxLength: 30 }),
    }),
    { minLength: 1, maxLength: 12 },
  )
  .map((turns) =>
    turns.flatMap((t, i): AgentMessage[] => {
      const round: AgentMessage[] = [{ role: 'user', content: t.ask }];
      if (t.tool) {
        const call: AssistantMessage = { role: 'assistant', content: [{ type: 'toolCall', id: `toolu_${i}`, name: 'read_file', arguments: { path: t.tool.path } }], stopReason: 'toolUse' };
        round.push(call, { role: 'toolResult', toolCallId: `toolu_${i}`, toolName: 'read_file', content: [{ type: 'text', text: t.tool.result }], isError: t.tool.isError });
      }
      round.push({ role: 'assistant', content: [{ type: 'text', text: t.reply }], stopReason: 'stop' });
      return round;
    }),
  );

describe('streamedRequestBody', () => {
  it('is byte for byte the JSON the SDK would send, call after call on the same (growing) window', () => {
    fc.assert(
      fc.property(windowArb, fc.string({ maxLength: 20 }), fc.boolean(), (window, next, promptCaching) => {
        const request = (messages: AgentMessage[]): ModelRequest => ({ model: 'claude-test', system: 'Be brief.', messages, maxTokens: 64, promptCaching, tools: [{ name: 'read_file', description: 'Read', inputSchema: { properties: { path: { type: 'string' } } } }] });
        const first = toAnthropicParams(request(window));
        expect(streamedRequestBody(first).toString('utf8')).toBe(sdkBody(first));
        // The next call shares every earlier conversion (their JSON is reused) and moves the cache markers.
        const second = toAnthropicParams(request([...window, { role: 'user', content: next }]));
        expect(streamedRequestBody(second).toString('utf8')).toBe(sdkBody(second));
      }),
      { numRuns: 150 },
    );
  });

  it('leaves out what the SDK sends as headers (betas) and keeps the beta fields', () => {
    const request: ModelRequest = { model: 'claude-test', messages: [{ role: 'user', content: 'hi' }], maxTokens: 64, contextManagement: { clearToolUses: {} } };
    const params = toAnthropicBetaParams(toAnthropicParams(request), request);
    expect(params.betas?.length).toBeGreaterThan(0);
    const { betas: _betas, ...body } = params;
    expect(streamedRequestBody(params).toString('utf8')).toBe(sdkBody(body));
    expect(JSON.parse(streamedRequestBody(params).toString('utf8'))).toHaveProperty('context_management');
  });

  it('is what the fake server receives through the real SDK, on both endpoints', async () => {
    const fake = await startFakeAnthropic();
    try {
      const client = new AnthropicModelClient({ apiKey: 'sk-ant-test', baseURL: fake.url });
      const messages: AgentMessage[] = [
        { role: 'user', content: 'read "a" please\u0000' },
        { role: 'assistant', content: [{ type: 'toolCall', id: 'toolu_1', name: 'read_file', arguments: { path: 'a' } }], stopReason: 'toolUse' },
        { role: 'toolResult', toolCallId: 'toolu_1', toolName: 'read_file', content: [{ type: 'text', text: 'line 1\nline 2 \u2028 done' }], isError: false },
      ];
      const plain: ModelRequest = { model: 'claude-test', system: 'Be brief.', messages, maxTokens: 64, promptCaching: true };
      const beta: ModelRequest = { ...plain, contextManagement: { clearToolUses: {} } };
      fake.enqueue(fakeReply.text('one'), fakeReply.text('two'));
      await client.complete(plain);
      await client.complete(beta);
      const [sentPlain, sentBeta] = fake.requests;
      expect(sentPlain!.headers['content-type']).toBe('application/json');
      expect(sentPlain!.rawBody).toBe(sdkBody(toAnthropicParams(plain)));
      expect(sentBeta!.path).toBe('/v1/messages');
      expect(String(sentBeta!.headers['anthropic-beta'])).toContain('context-management');
      const { betas: _betas, ...betaBody } = toAnthropicBetaParams(toAnthropicParams(beta), beta);
      expect(sentBeta!.rawBody).toBe(sdkBody(betaBody));
    } finally {
      await fake.close();
    }
  });
});
