/**
 * Server-side context management through `AnthropicModelClient` and the real SDK's beta endpoint,
 * against the fake (which checks the beta fields as the API does); plus the pure request mapping.
 */
import { AnthropicModelClient } from '../../src/model/anthropic-client';
import {
  contextManagementBetas,
  toAnthropicContextManagement,
  withCompactionBlock,
} from '../../src/model/anthropic-context-management';
import { contextManagementFromOptions } from '../../src/engine/anthropic-native-options';
import { ModelRequestInvalidError } from '../../src/model/errors';
import { configFromEnv } from '../../src/config/keel-config';
import type { ContextManagement, ModelRequest } from '../../src/model/model-client';
import { fakeReply, startFakeAnthropic, type FakeAnthropic } from '../../src/testing';

const native: ContextManagement = { compaction: { triggerTokens: 50_000 }, clearToolUses: {} };
const big = `Ticket KEEL-4711 stays open. ${'filler text '.repeat(20_000)}`;
const request = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'claude-test',
  messages: [{ role: 'user', content: 'hello' }],
  maxTokens: 256,
  ...overrides,
});

describe('Anthropic context management: request mapping', () => {
  it('sends thinking clearing first, compaction last and always pausing, with the betas each edit needs', () => {
    const cm = contextManagementFromOptions({
      compactTriggerTokens: 60_000,
      compactInstructions: 'Keep ticket ids.',
      clearToolUses: { keepToolUses: 2, excludeTools: ['memory_search'] },
      clearThinkingKeepTurns: 'all',
    });
    expect(toAnthropicContextManagement(cm).edits).toEqual([
      { type: 'clear_thinking_20251015', keep: 'all' },
      { type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 2 }, exclude_tools: ['memory_search'] },
      {
        type: 'compact_20260112',
        trigger: { type: 'input_tokens', value: 60_000 },
        pause_after_compaction: true,
        instructions: 'Keep ticket ids.',
      },
    ]);
    expect(contextManagementBetas(cm)).toEqual(['context-management-2025-06-27', 'compact-2026-01-12']);
    expect(contextManagementBetas({ compaction: { triggerTokens: 50_000 } })).toEqual(['compact-2026-01-12']);
  });

  it('rejects engine options naming the field', () => {
    expect(() => contextManagementFromOptions({ compactTriggerTokens: 1000 })).toThrow(
      /contextEngineOptions\.compactTriggerTokens.*at least 50000/,
    );
    expect(() => contextManagementFromOptions({ clearToolUses: { keep: 3 } })).toThrow(
      /contextEngineOptions\.clearToolUses/,
    );
    // The worker's config fails at start, naming the field.
    expect(() =>
      configFromEnv({}, { contextEngine: 'anthropic-native', contextEngineOptions: { compactTriggerTokens: 10 } }),
    ).toThrow(/contextEngineOptions\.compactTriggerTokens/);
  });

  it('puts the compaction block where the summary stand-in was and joins the paused reply to it', () => {
    const block = { summary: 'S', encryptedContent: 'E', signature: 'sig' };
    const out = withCompactionBlock(
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<summary>…</summary>' },
            { type: 'text', text: 'next question' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'answer' }] },
      ],
      block,
    );
    expect(out).toEqual([
      { role: 'assistant', content: [{ type: 'compaction', content: 'S', encrypted_content: 'E', signature: 'sig' }] },
      { role: 'user', content: [{ type: 'text', text: 'next question' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'answer' }] },
    ]);
    const paused = withCompactionBlock(
      [
        { role: 'user', content: [{ type: 'text', text: '<summary>…</summary>' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'go on' }] },
      ],
      block,
    );
    expect(paused).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'compaction', content: 'S', encrypted_content: 'E', signature: 'sig' },
          { type: 'text', text: 'go on' },
        ],
      },
    ]);
    const cached = withCompactionBlock(
      [
        {
          role: 'user',
          content: [{ type: 'text', text: '<summary>…</summary>', cache_control: { type: 'ephemeral' } }],
        },
      ],
      block,
    );
    expect(cached[0]!.content).toEqual([
      {
        type: 'compaction',
        cache_control: { type: 'ephemeral' },
        content: 'S',
        encrypted_content: 'E',
        signature: 'sig',
      },
    ]);
  });
});

describe('Anthropic context management: client against the fake', () => {
  let fake: FakeAnthropic;
  let client: AnthropicModelClient;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    client = new AnthropicModelClient({ apiKey: 'sk-ant-test', baseURL: fake.url });
  });
  afterAll(async () => fake.close());

  it('sends the edits with their beta headers; under the trigger the reply is ordinary', async () => {
    const before = fake.requests.length;
    fake.enqueue(fakeReply.text('plain'));
    const reply = await client.complete(request({ contextManagement: native }));
    const sent = fake.requests[before]!;
    expect(String(sent.headers['anthropic-beta']).split(',')).toEqual([
      'context-management-2025-06-27',
      'compact-2026-01-12',
    ]);
    expect(sent.body.context_management).toEqual(toAnthropicContextManagement(native));
    expect(reply.compaction).toBeUndefined();
    expect(reply.content).toEqual([{ type: 'text', text: 'plain' }]);
  });

  it('past the trigger returns the compaction block alone (stop reason compaction); sent back, it replaces what it summarized', async () => {
    const before = fake.requests.length;
    const compacted = await client.complete(
      request({ messages: [{ role: 'user', content: big }], contextManagement: native }),
    );
    expect(compacted.stopReason).toBe('compaction');
    expect(compacted.content).toEqual([]);
    expect(compacted.compaction?.summary).toContain('Ticket KEEL-4711 stays open.');
    expect(compacted.compaction?.signature).toMatch(/^fake-sig-/);
    expect(compacted.usage).toMatchObject({ input: 0, output: 0 });
    expect(compacted.compactionUsage?.input).toBeGreaterThan(50_000);

    fake.enqueue(fakeReply.text('continued'));
    const next = await client.complete(
      request({
        messages: [{ role: 'user', content: [{ type: 'text', text: '<summary>stand-in</summary>' }] }],
        contextManagement: native,
        providerCompaction: compacted.compaction!,
      }),
    );
    expect(next.content).toEqual([{ type: 'text', text: 'continued' }]);
    expect(fake.requests[before + 1]!.body.messages).toEqual([
      {
        role: 'assistant',
        content: [
          {
            type: 'compaction',
            content: compacted.compaction!.summary,
            encrypted_content: compacted.compaction!.encryptedContent,
            signature: compacted.compaction!.signature,
          },
        ],
      },
    ]);

    // A block changed on the way back is refused, as a signed block is.
    const tampered = client.complete(
      request({
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
        contextManagement: native,
        providerCompaction: { ...compacted.compaction!, summary: 'edited' },
      }),
    );
    await expect(tampered).rejects.toBeInstanceOf(ModelRequestInvalidError);
    await expect(tampered).rejects.toThrow(/Invalid `signature` in `compaction` block/);
  });

  it('reports cleared tool results as applied edits', async () => {
    const calls = Array.from({ length: 5 }, (_, i) => i);
    const messages: ModelRequest['messages'] = [{ role: 'user', content: 'read five files' }];
    for (const i of calls) {
      messages.push({
        role: 'assistant',
        content: [{ type: 'toolCall', id: `t${i}`, name: 'read', arguments: { i } }],
      });
      messages.push({
        role: 'toolResult',
        toolCallId: `t${i}`,
        toolName: 'read',
        content: [{ type: 'text', text: 'x'.repeat(4_000) }],
      });
    }
    fake.enqueue(fakeReply.text('done'));
    const reply = await client.complete(
      request({ messages, contextManagement: { clearToolUses: { triggerTokens: 1_000, keepToolUses: 2 } } }),
    );
    expect(reply.appliedEdits).toEqual([
      { type: 'clear_tool_uses_20250919', clearedInputTokens: expect.any(Number), clearedToolUses: 3 },
    ]);
  });
});

describe('fake context management: malformed requests get the API wording', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => (fake = await startFakeAnthropic()));
  afterAll(async () => fake.close());

  const post = async (body: Record<string, unknown>, beta?: string): Promise<{ status: number; message: string }> => {
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(beta ? { 'anthropic-beta': beta } : {}) },
      body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...body }),
    });
    const json = (await res.json()) as { error: { message: string } };
    return { status: res.status, message: json.error.message };
  };

  it('without pause_after_compaction the block comes first in an ordinary reply, with both iterations', async () => {
    fake.enqueue(fakeReply.text('answered'));
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-beta': 'compact-2026-01-12' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 10,
        messages: [{ role: 'user', content: big }],
        context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 50_000 } }] },
      }),
    });
    const body = (await res.json()) as {
      content: Array<{ type: string }>;
      stop_reason: string;
      usage: { iterations: Array<{ type: string }> };
      context_management: unknown;
    };
    expect(body.content.map((b) => b.type)).toEqual(['compaction', 'text']);
    expect(body.stop_reason).toBe('end_turn');
    expect(body.usage.iterations.map((i) => i.type)).toEqual(['compaction', 'message']);
    expect(body.context_management).toEqual({ applied_edits: [] });
  });

  it.each([
    [
      'no beta header',
      { context_management: { edits: [{ type: 'compact_20260112' }] } },
      undefined,
      'context_management: Extra inputs are not permitted',
    ],
    [
      'compaction without its beta',
      { context_management: { edits: [{ type: 'compact_20260112' }] } },
      'context-management-2025-06-27',
      "context_management.edits.0: Input tag 'compact_20260112' found using 'type' does not match any of the expected tags: 'clear_tool_uses_20250919', 'clear_thinking_20251015'",
    ],
    [
      'a trigger under the minimum',
      { context_management: { edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 1000 } }] } },
      'compact-2026-01-12',
      'context_management.edits.0.compact_20260112.trigger.value: Input should be greater than or equal to 50000',
    ],
    [
      'an unknown field',
      { context_management: { edits: [{ type: 'clear_tool_uses_20250919', keep_last: 3 }] } },
      'context-management-2025-06-27',
      'context_management.edits.0.clear_tool_uses_20250919.keep_last: Extra inputs are not permitted',
    ],
    [
      'thinking clearing without thinking',
      { context_management: { edits: [{ type: 'clear_thinking_20251015' }] } },
      'context-management-2025-06-27',
      'context_management.edits.0: clear_thinking_20251015 strategy requires thinking to be enabled',
    ],
    [
      'an empty compaction block',
      { messages: [{ role: 'assistant', content: [{ type: 'compaction', content: '' }] }] },
      'compact-2026-01-12',
      'messages.0.content.0.compaction.content: String should have at least 1 character',
    ],
  ])('%s', async (_name, body, beta, message) => {
    expect(await post(body, beta)).toEqual({ status: 400, message });
  });
});
