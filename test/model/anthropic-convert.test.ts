import type Anthropic from '@anthropic-ai/sdk';
import type { AgentMessage, AssistantMessage, ToolResultMessage } from '../../src/context/types';
import {
  fromAnthropicMessage,
  fromAnthropicStopReason,
  toAnthropicMessages,
  toAnthropicParams,
  toAnthropicTools,
} from '../../src/model/anthropic-convert';

const user = (text: string): AgentMessage => ({ role: 'user', content: text });
const result = (toolCallId: string, text: string, extra: Partial<ToolResultMessage> = {}): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'read_file',
  content: [{ type: 'text', text }],
  ...extra,
});

/** What the API would send back for an assistant turn with these blocks. */
function apiMessage(content: unknown[], stop_reason: string | null = 'end_turn'): Anthropic.Message {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content,
    stop_reason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2, cache_creation_input_tokens: 1 },
  } as unknown as Anthropic.Message;
}

describe('toAnthropicMessages', () => {
  it('turns tool calls into tool_use and tool results into one user message of tool_result blocks', () => {
    const messages: AgentMessage[] = [
      user('read both files'),
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'toolCall', id: 'call_1', name: 'read_file', arguments: { path: 'a.txt' } },
          { type: 'toolUse', id: 'call_2', name: 'read_file', input: { path: 'b.txt' } },
        ],
        stopReason: 'toolUse',
      },
      result('call_1', 'A'),
      result('call_2', 'boom', { isError: true }),
    ];
    expect(toAnthropicMessages(messages)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'read both files' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'a.txt' } },
          { type: 'tool_use', id: 'call_2', name: 'read_file', input: { path: 'b.txt' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'A' }] },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'boom' }], is_error: true },
        ],
      },
    ]);
  });

  it('never sends tool-result details', () => {
    const sent = toAnthropicMessages([
      result('call_1', 'ok', { details: { secret: 'sk-live-123', diff: 'x'.repeat(10) } }),
    ]);
    expect(JSON.stringify(sent)).not.toContain('sk-live-123');
    expect(JSON.stringify(sent)).not.toContain('details');
  });

  it('merges a user turn that follows tool results into the same user message, results first', () => {
    const call: AgentMessage = {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'call_1', name: 'read_file', arguments: {} }],
    };
    const sent = toAnthropicMessages([user('go'), call, user('displaced'), result('call_1', 'A'), user('and then?')]);
    expect(sent[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'A' }] },
        { type: 'text', text: 'displaced' },
        { type: 'text', text: 'and then?' },
      ],
    });
    expect(sent).toHaveLength(3);
  });

  it('drops unsigned thinking and keeps signed thinking', () => {
    const sent = toAnthropicMessages([
      user('q'),
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'unsigned' },
          { type: 'thinking', thinking: 'signed', signature: 'sig' },
          { type: 'text', text: 'answer' },
        ],
      },
    ]);
    expect(sent[1]!.content).toEqual([
      { type: 'thinking', thinking: 'signed', signature: 'sig' },
      { type: 'text', text: 'answer' },
    ]);
  });

  it('passes images through when they have a source and says so when they do not', () => {
    const sent = toAnthropicMessages([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
          { type: 'image', data: 'BBB', mimeType: 'image/jpeg' },
          { type: 'image', url: 'https://example.com/c.png' },
          { type: 'image' },
        ],
      },
    ]);
    expect(sent[0]!.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'BBB' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/c.png' } },
      { type: 'text', text: '[image omitted: no source stored]' },
    ]);
  });

  it('skips empty text blocks and drops messages left empty', () => {
    const sent = toAnthropicMessages([
      user('q'),
      { role: 'assistant', content: [{ type: 'text', text: '' }] },
      user('again'),
    ]);
    expect(sent).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'q' },
          { type: 'text', text: 'again' },
        ],
      },
    ]);
  });
});

describe('toAnthropicMessages on the same message objects again (a cached window)', () => {
  const call: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'toolCall', id: 'toolu_1', name: 'read_file', arguments: { path: 'a' } }],
    stopReason: 'toolUse',
  };
  const window: AgentMessage[] = [user('first'), call, result('toolu_1', 'contents'), user('next')];

  it("reuses each message's conversion, frozen, and what one request changes is a copy that never reaches the next", () => {
    const first = toAnthropicMessages(window);
    // The tool result and the user message after it merge into one user message, results first.
    expect(first.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    const params = toAnthropicParams({ model: 'm', maxTokens: 10, messages: window, promptCaching: true });
    expect(JSON.stringify(params.messages)).toContain('cache_control');
    // Shared conversions cannot be changed by a request; a merged message is the request's own.
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(() =>
      (first[0]!.content as Anthropic.ContentBlockParam[]).push({ type: 'text', text: 'changed later' }),
    ).toThrow(TypeError);
    expect(Object.isFrozen(first[2])).toBe(false);
    (first[2]!.content as Anthropic.ContentBlockParam[]).push({ type: 'text', text: 'changed later' });
    const again = toAnthropicMessages(window);
    expect(again).toEqual(toAnthropicMessages(window.map((m) => structuredClone(m))));
    expect(JSON.stringify(again)).not.toContain('cache_control');
    expect(JSON.stringify(again)).not.toContain('changed later');
    // The messages are the ones converted the first time: a turn converts only its new messages.
    expect(again[0]).toBe(first[0]);
    expect(again[1]).toBe(first[1]);
    // A new message object is converted afresh.
    const longer = toAnthropicMessages([
      ...window,
      { role: 'assistant', content: [{ type: 'text', text: 'done' }], stopReason: 'stop' },
    ]);
    expect(longer[3]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'done' }] });
  });
});

describe('toAnthropicParams with cachedPrefixMessages (a request that repeats an earlier call and adds to it)', () => {
  const marked = (params: Anthropic.MessageCreateParamsNonStreaming) =>
    params.messages.flatMap((m, i) =>
      Array.isArray(m.content)
        ? m.content.flatMap((b, j) => ((b as { cache_control?: unknown }).cache_control ? [`${i}.${j}`] : []))
        : [],
    );
  const call: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'toolCall', id: 'toolu_1', name: 'read_file', arguments: { path: 'a' } }],
    stopReason: 'toolUse',
  };
  const earlier: AgentMessage[] = [
    user('first'),
    { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
    user('read a'),
    call,
    result('toolu_1', 'contents'),
  ];
  const added: AgentMessage[] = [
    { role: 'assistant', content: [{ type: 'text', text: 'a says contents' }] },
    user('summarize'),
  ];

  it('puts the markers where the earlier call put them and none on what it adds', () => {
    const before = toAnthropicParams({ model: 'm', maxTokens: 10, messages: earlier, promptCaching: true });
    const after = toAnthropicParams({
      model: 'm',
      maxTokens: 10,
      messages: [...earlier, ...added],
      promptCaching: true,
      cachedPrefixMessages: earlier.length,
    });
    expect(marked(before)).toEqual(['2.0', '4.0']);
    expect(marked(after)).toEqual(marked(before));
    expect(after.messages.slice(0, before.messages.length)).toEqual(before.messages);
    // Without it, the last message takes the marker, and the earlier call's last is the one before the reply.
    expect(
      marked(toAnthropicParams({ model: 'm', maxTokens: 10, messages: [...earlier, ...added], promptCaching: true })),
    ).toEqual(['4.0', '6.0']);
  });
});

describe('toAnthropicTools and toAnthropicParams', () => {
  it('names the schema input_schema and makes it an object schema', () => {
    expect(toAnthropicTools([{ name: 'ls', description: 'List', inputSchema: {} }])).toEqual([
      { name: 'ls', description: 'List', input_schema: { type: 'object' } },
    ]);
  });

  it('omits system, tools and temperature when absent', () => {
    expect(toAnthropicParams({ model: 'm', messages: [user('hi')], maxTokens: 10 })).toEqual({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
  });
});

describe('fromAnthropicMessage', () => {
  it('turns tool_use into toolCall blocks with arguments, with usage and stop reason', () => {
    const message = fromAnthropicMessage(
      apiMessage(
        [
          { type: 'text', text: 'Let me check.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } },
          { type: 'redacted_thinking', data: 'opaque' },
        ],
        'tool_use',
      ),
    );
    expect(message).toEqual<AssistantMessage>({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'toolCall', id: 'toolu_1', name: 'read_file', arguments: { path: 'a.txt' } },
      ],
      stopReason: 'toolUse',
      model: 'claude-test',
      usage: { input: 10, output: 5, cacheRead: 2, cacheWrite: 1, totalTokens: 15 },
    });
  });

  it('round-trips: a reply converted to Keel and back is the tool_use the API sent', () => {
    const blocks = [
      { type: 'thinking', thinking: 'plan', signature: 'sig' },
      { type: 'text', text: 'Calling.' },
      { type: 'tool_use', id: 'toolu_7', name: 'grep', input: { pattern: 'TODO', paths: ['src'] } },
    ];
    const keel = fromAnthropicMessage(apiMessage(blocks, 'tool_use'));
    const back = toAnthropicMessages([keel, result('toolu_7', 'src/a.ts:1 TODO')]);
    expect(back).toEqual([
      { role: 'assistant', content: blocks },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_7', content: [{ type: 'text', text: 'src/a.ts:1 TODO' }] },
        ],
      },
    ]);
  });
});

describe('fromAnthropicStopReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['tool_use', 'toolUse'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['pause_turn', 'pauseTurn'],
    ['refusal', 'refusal'],
    ['something_new', 'something_new'],
  ])('%s → %s', (reason, keel) => {
    expect(fromAnthropicStopReason(reason)).toBe(keel);
  });
});
