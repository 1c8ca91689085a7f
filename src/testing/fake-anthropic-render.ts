/**
 * Turns a script step into what the real APIs send: an Anthropic Message JSON, the Anthropic SSE
 * event sequence, an OpenAI chat completion, or an error body. Pure, so the server stays wiring.
 */
import type { FakeContentBlock, FakeErrorStep, FakeMessageStep } from './fake-anthropic-steps';

/** One server-sent event: `event: <name>` and its JSON `data`. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** The usage the fake reports; `input_tokens` counts only prompt tokens neither read from nor written to the cache. */
export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** An OpenAI completion's usage: the whole prompt in `prompt_tokens`, the part its cache served in `cached_tokens`. */
export interface FakeOpenAiUsage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
}

/** `usage` as an OpenAI chat completion (or its last streamed chunk) reports it. */
function openAiUsageBody(usage: FakeOpenAiUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens },
  };
}

/**
 * Token counts the fake reports; scripted values win over the length/4 estimates. Prompt tokens
 * served by the prompt cache (`cache`) are reported apart from `input_tokens`, as the API does.
 */
export function fakeUsage(
  step: FakeMessageStep,
  rawRequestBody: string,
  cache: { cache_creation_input_tokens: number; cache_read_input_tokens: number } = {
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  },
): FakeUsage {
  const outputChars = step.content.reduce((n, block) => n + JSON.stringify(block).length, 0);
  const prompt = step.usage?.input_tokens ?? Math.max(1, Math.ceil(rawRequestBody.length / 4));
  return {
    input_tokens: Math.max(0, prompt - cache.cache_creation_input_tokens - cache.cache_read_input_tokens),
    output_tokens: step.usage?.output_tokens ?? Math.max(1, Math.ceil(outputChars / 4)),
    ...cache,
  };
}

function stopReasonOf(step: FakeMessageStep): string {
  return step.stopReason ?? (step.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
}

function finalBlock(block: FakeContentBlock): Record<string, unknown> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    case 'compaction':
      return {
        type: 'compaction',
        content: block.content,
        encrypted_content: block.encrypted_content,
        signature: block.signature,
      };
  }
}

/** The non-streaming Anthropic Message body. */
export function anthropicMessageBody(
  step: FakeMessageStep,
  ids: { messageId: string; model: string },
  usage: FakeUsage,
): Record<string, unknown> {
  return {
    id: ids.messageId,
    type: 'message',
    role: 'assistant',
    model: ids.model,
    content: step.content.map(finalBlock),
    stop_reason: stopReasonOf(step),
    stop_sequence: null,
    usage: {
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      ...usage,
      ...(step.iterations ? { iterations: step.iterations } : {}),
    },
    ...(step.contextManagement ? { context_management: step.contextManagement } : {}),
  };
}

/** Word-sized pieces, like the deltas the API streams. */
function textChunks(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function blockEvents(block: FakeContentBlock, index: number): SseEvent[] {
  const delta = (d: Record<string, unknown>): SseEvent => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: d },
  });
  const start = (contentBlock: Record<string, unknown>): SseEvent => ({
    event: 'content_block_start',
    data: { type: 'content_block_start', index, content_block: contentBlock },
  });
  const events: SseEvent[] = [];
  switch (block.type) {
    case 'text':
      events.push(start({ type: 'text', text: '' }));
      for (const piece of block.chunks ?? textChunks(block.text))
        events.push(delta({ type: 'text_delta', text: piece }));
      break;
    case 'tool_use': {
      events.push(start({ type: 'tool_use', id: block.id, name: block.name, input: {} }));
      const json = block.inputJson ?? JSON.stringify(block.input);
      const half = Math.ceil(json.length / 2);
      for (const piece of [json.slice(0, half), json.slice(half)]) {
        if (piece) events.push(delta({ type: 'input_json_delta', partial_json: piece }));
      }
      break;
    }
    case 'thinking':
      events.push(start({ type: 'thinking', thinking: '', signature: '' }));
      events.push(delta({ type: 'thinking_delta', thinking: block.thinking }));
      events.push(delta({ type: 'signature_delta', signature: block.signature }));
      break;
    case 'compaction':
      // The summary arrives in one delta; the signature is on the block from the start.
      events.push(start({ type: 'compaction', content: null, encrypted_content: null, signature: block.signature }));
      events.push(
        delta({ type: 'compaction_delta', content: block.content, encrypted_content: block.encrypted_content }),
      );
      break;
  }
  events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  return events;
}

/** The streaming event sequence: message_start, ping, per block start/deltas/stop, message_delta, message_stop. */
export function anthropicSseEvents(
  step: FakeMessageStep,
  ids: { messageId: string; model: string },
  usage: FakeUsage,
): SseEvent[] {
  const message = {
    ...anthropicMessageBody(step, ids, { ...usage, output_tokens: 1 }),
    content: [],
    stop_reason: null,
  };
  const events: SseEvent[] = [
    { event: 'message_start', data: { type: 'message_start', message } },
    { event: 'ping', data: { type: 'ping' } },
  ];
  step.content.forEach((block, index) => events.push(...blockEvents(block, index)));
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: stopReasonOf(step), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens, ...(step.iterations ? { iterations: step.iterations } : {}) },
      ...(step.contextManagement ? { context_management: step.contextManagement } : {}),
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** The SSE wire text of one event. */
export function sseText(event: SseEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** `{type:'error', error:{type, message}}`, the Anthropic error body. */
export function anthropicErrorBody(errorType: string, message: string): Record<string, unknown> {
  return { type: 'error', error: { type: errorType, message } };
}

const OPENAI_FINISH: Record<string, string> = {
  compaction: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  refusal: 'content_filter',
  pause_turn: 'stop',
};

/** The same step as an OpenAI chat completion. */
export function openAiCompletionBody(
  step: FakeMessageStep,
  ids: { messageId: string; model: string },
  usage: FakeOpenAiUsage,
): Record<string, unknown> {
  const text = step.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const toolCalls = step.content.flatMap((b) =>
    b.type === 'tool_use'
      ? [{ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } }]
      : [],
  );
  return {
    id: ids.messageId,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: ids.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text || null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        finish_reason: OPENAI_FINISH[stopReasonOf(step)] ?? 'stop',
      },
    ],
    usage: openAiUsageBody(usage),
  };
}

/** The OpenAI error body shape for the same error step. */
export function openAiErrorBody(step: FakeErrorStep): Record<string, unknown> {
  return {
    error: {
      message: step.message,
      type: step.errorType,
      code: step.code ?? (step.status === 429 ? 'rate_limit_exceeded' : null),
    },
  };
}

/** One SSE `data:` payload of a streamed chat completion: a chunk object, or the closing `[DONE]`. */
export type OpenAiSseData = Record<string, unknown> | '[DONE]';

/**
 * The same step as a streamed chat completion: a role chunk, text word by word (or the block's
 * `chunks`), thinking as `reasoning_content`, each tool call as a start fragment (index, id, name)
 * then its arguments in two pieces, the finish chunk, a usage chunk when asked for, then `[DONE]`.
 */
export function openAiSseChunks(
  step: FakeMessageStep,
  ids: { messageId: string; model: string },
  usage: FakeOpenAiUsage,
  includeUsage: boolean,
): OpenAiSseData[] {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> => ({
    id: ids.messageId,
    object: 'chat.completion.chunk',
    created,
    model: ids.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const out: OpenAiSseData[] = [chunk({ role: 'assistant', content: '' })];
  let toolIndex = 0;
  for (const block of step.content) {
    if (block.type === 'text') {
      for (const piece of block.chunks ?? textChunks(block.text)) out.push(chunk({ content: piece }));
    } else if (block.type === 'thinking') {
      out.push(chunk({ reasoning_content: block.thinking }));
    } else if (block.type === 'tool_use') {
      const index = toolIndex++;
      out.push(
        chunk({
          tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }],
        }),
      );
      const json = JSON.stringify(block.input);
      const half = Math.ceil(json.length / 2);
      for (const piece of [json.slice(0, half), json.slice(half)]) {
        if (piece) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    }
  }
  out.push(chunk({}, OPENAI_FINISH[stopReasonOf(step)] ?? 'stop'));
  if (includeUsage) {
    out.push({
      id: ids.messageId,
      object: 'chat.completion.chunk',
      created,
      model: ids.model,
      choices: [],
      usage: openAiUsageBody(usage),
    });
  }
  out.push('[DONE]');
  return out;
}

/** The SSE wire text of one chat-completion stream payload. */
export function openAiSseText(data: OpenAiSseData): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}
