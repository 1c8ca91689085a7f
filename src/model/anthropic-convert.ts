/**
 * Keel messages ↔ Anthropic Messages API shapes. The only place that knows `tool_use` /
 * `tool_result`; everything else in Keel speaks `toolCall` / `toolResult` (src/context/types.ts).
 */
import { jsonDepthExceeds } from '../text/json-depth';
import type Anthropic from '@anthropic-ai/sdk';
import type { BetaMessage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type {
  AgentMessage,
  AssistantBlock,
  AssistantMessage,
  ImageBlock,
  StopReason,
  TextBlock,
} from '../context/types';
import { isToolCallBlock, toolCallArguments } from '../context/types';
import type { ModelRequest, ModelTool } from './model-client';
import { withCacheBreakpoints } from './anthropic-cache-breakpoints';

type ContentParam = Anthropic.ContentBlockParam;
type ImageSource = Anthropic.ImageBlockParam['source'];

/** Replaces an image Keel holds no bytes or URL for: the model is told, rather than the block vanishing. */
const IMAGE_WITHOUT_SOURCE_TEXT = '[image omitted: no source stored]';

function imageParam(block: ImageBlock): ContentParam {
  const source = block.source as { type?: unknown } | undefined;
  if (source && (source.type === 'base64' || source.type === 'url' || source.type === 'file')) {
    return { type: 'image', source: source as ImageSource };
  }
  if (block.data && block.mimeType) {
    return {
      type: 'image',
      source: {
        type: 'base64',
        media_type: block.mimeType as Anthropic.Base64ImageSource['media_type'],
        data: block.data,
      },
    };
  }
  if (block.url) return { type: 'image', source: { type: 'url', url: block.url } };
  return { type: 'text', text: IMAGE_WITHOUT_SOURCE_TEXT };
}

/** Text and images; empty text blocks are skipped because the API rejects them. */
function userBlocks(
  content: string | Array<TextBlock | ImageBlock>,
): Array<Anthropic.TextBlockParam | Anthropic.ImageBlockParam> {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content } as TextBlock] : content;
  const out: Array<Anthropic.TextBlockParam | Anthropic.ImageBlockParam> = [];
  for (const block of blocks) {
    if (block.type === 'text') {
      if (block.text) out.push({ type: 'text', text: block.text });
    } else if (block.type === 'image') {
      out.push(imageParam(block) as Anthropic.TextBlockParam | Anthropic.ImageBlockParam);
    }
  }
  return out;
}

function assistantBlocks(content: AssistantBlock[]): ContentParam[] {
  const out: ContentParam[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      if ((block as TextBlock).text) out.push({ type: 'text', text: (block as TextBlock).text });
    } else if (block.type === 'thinking') {
      // The API accepts only thinking it signed; unsigned (or foreign) thinking is dropped.
      if ('signature' in block && block.signature)
        out.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    } else if (isToolCallBlock(block)) {
      out.push({ type: 'tool_use', id: block.id, name: block.name, input: toolCallArguments(block) ?? {} });
    }
  }
  return out;
}

/**
 * Conversions by message object. A worker's cached window hands the same message objects to every
 * turn of a session, so a turn converts only what is new (issue 20); messages are never changed in
 * place. A conversion is frozen, with its content and blocks (values inside a block, such as a tool
 * call's input, are the message's own): requests share it, and what changes a request (merging,
 * cache markers, a compaction block) makes copies. Being frozen is also what lets the request body
 * keep its JSON (`json-request-body.ts`).
 */
const converted = new WeakMap<AgentMessage, Anthropic.MessageParam>();

function convertOne(message: AgentMessage): Anthropic.MessageParam {
  if (message.role === 'assistant') return frozen('assistant', assistantBlocks(message.content));
  if (message.role === 'toolResult') {
    const result: Anthropic.ToolResultBlockParam = { type: 'tool_result', tool_use_id: message.toolCallId };
    const blocks = userBlocks(message.content);
    if (blocks.length > 0) result.content = frozenBlocks(blocks);
    if (message.isError) result.is_error = true;
    return frozen('user', [result]);
  }
  return frozen('user', userBlocks(message.content));
}

function frozen(role: 'user' | 'assistant', content: ContentParam[]): Anthropic.MessageParam {
  return Object.freeze({ role, content: frozenBlocks(content) });
}

/** Freezes a block list made here and each block in it (not the values inside a block). */
function frozenBlocks<Block extends object>(blocks: Block[]): Block[] {
  for (const block of blocks) Object.freeze(block);
  return Object.freeze(blocks) as Block[];
}

/**
 * Keel messages → Anthropic `MessageParam`s. Tool calls (any spelling) become `tool_use` with their
 * `arguments` (or `input`) as input; toolResult messages become user messages of `tool_result`
 * blocks, and consecutive user-role messages merge into one with the `tool_result` blocks first
 * (the API wants results right after the calls). `details` is never sent; unsigned thinking is
 * dropped; images pass through when they have a source; messages left empty are dropped. Messages
 * that did not merge are the shared, frozen conversions: copy one to change it.
 */
export function toAnthropicMessages(messages: readonly AgentMessage[]): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  for (const message of messages) {
    let one = converted.get(message);
    if (!one) converted.set(message, (one = convertOne(message)));
    const content = one.content as readonly ContentParam[];
    if (content.length === 0) continue;
    const previous = out[out.length - 1];
    if (previous && previous.role === 'user' && one.role === 'user') {
      const merged = [...(previous.content as readonly ContentParam[]), ...content];
      out[out.length - 1] = {
        role: 'user',
        content: [...merged.filter((b) => b.type === 'tool_result'), ...merged.filter((b) => b.type !== 'tool_result')],
      };
    } else {
      out.push(one);
    }
  }
  return out;
}

/** Keel tools → Anthropic tools; a schema without `type` is treated as an object schema, as the API requires. */
export function toAnthropicTools(tools: readonly ModelTool[]): Anthropic.Tool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.inputSchema } as Anthropic.Tool.InputSchema,
  }));
}

/** The request body (without `stream`) for a Keel `ModelRequest`, with cache breakpoints when `promptCaching` is on. */
export function toAnthropicParams(request: ModelRequest): Anthropic.MessageCreateParamsNonStreaming {
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages: toAnthropicMessages(request.messages),
    ...(request.system ? { system: request.system } : {}),
    ...(request.tools && request.tools.length > 0 ? { tools: toAnthropicTools(request.tools) } : {}),
    ...(request.toolChoice && request.tools && request.tools.length > 0
      ? { tool_choice: { type: request.toolChoice } }
      : {}),
    ...(request.thinking
      ? { thinking: { type: 'enabled', budget_tokens: request.thinking.budgetTokens } }
      : request.temperature === undefined
        ? {}
        : { temperature: request.temperature }),
  };
  if (!request.promptCaching) return params;
  // Tool results of one round become one user message: the prefix is counted as the provider sees it.
  const prefix =
    request.cachedPrefixMessages === undefined
      ? undefined
      : toAnthropicMessages(request.messages.slice(0, request.cachedPrefixMessages)).length;
  return withCacheBreakpoints(params, prefix);
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'toolUse',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  pause_turn: 'pauseTurn',
  refusal: 'refusal',
};

/** Anthropic stop reason → Keel's (`stop`, `toolUse`, `length`, …); unknown ones pass through. */
export function fromAnthropicStopReason(reason: string | null): StopReason {
  if (reason === null) return 'stop';
  return STOP_REASONS[reason] ?? reason;
}

/**
 * An Anthropic `Message` → a Keel `AssistantMessage`: text, signed thinking, and `tool_use` as
 * `toolCall` blocks with `arguments`. Blocks Keel does not model (redacted thinking, server tools)
 * are left out.
 */
export function fromAnthropicMessage(message: Anthropic.Message | BetaMessage): AssistantMessage {
  const content: AssistantBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else if (block.type === 'thinking')
      content.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else if (block.type === 'tool_use') {
      // Input that is not a JSON object, or nests too deep to store, gets no `arguments`: the tool
      // answers with an input error and the tool-call repair step keeps it from later requests.
      const input: unknown = block.input ?? {};
      const usable = typeof input === 'object' && input !== null && !Array.isArray(input) && !jsonDepthExceeds(input);
      content.push({
        type: 'toolCall',
        id: block.id,
        name: block.name,
        ...(usable ? { arguments: input as Record<string, unknown> } : {}),
      });
    }
  }
  const usage = message.usage;
  return {
    role: 'assistant',
    content,
    stopReason: fromAnthropicStopReason(message.stop_reason),
    model: message.model,
    usage: {
      input: usage.input_tokens,
      output: usage.output_tokens,
      cacheRead: usage.cache_read_input_tokens ?? 0,
      cacheWrite: usage.cache_creation_input_tokens ?? 0,
      totalTokens: usage.input_tokens + usage.output_tokens,
    },
  };
}
