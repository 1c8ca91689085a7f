/**
 * Keel messages ↔ OpenAI chat-completions shapes, for OpenAI-compatible endpoints (e.g. Ollama).
 * Text-first: images become image_url parts in user messages; thinking is not sent.
 */
import { jsonDepthExceeds } from '../text/json-depth';
import { z } from 'zod';
import type { AgentMessage, AssistantBlock, ImageBlock, StopReason, TextBlock } from '../context/types';
import { isToolCallBlock, toolCallArguments } from '../context/types';
import type { ModelTool, ModelUsage } from './model-client';

type ChatPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** One chat message as the endpoint expects it. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatPart[] }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

function imageUrl(block: ImageBlock): string | undefined {
  const source = block.source as { type?: string; url?: string; data?: string; media_type?: string } | undefined;
  if (source?.type === 'url' && source.url) return source.url;
  if (source?.type === 'base64' && source.data && source.media_type)
    return `data:${source.media_type};base64,${source.data}`;
  if (block.data && block.mimeType) return `data:${block.mimeType};base64,${block.data}`;
  return block.url;
}

function textOf(blocks: Array<TextBlock | ImageBlock>): string {
  return blocks.map((b) => (b.type === 'text' ? b.text : '[image]')).join('\n');
}

/**
 * Conversions by message object: a worker's cached window hands the same message objects to every
 * call, so a call converts only what is new (issue 20). Each is frozen, as requests share it, and
 * that lets the request body keep its JSON (`json-request-body.ts`).
 */
const converted = new WeakMap<AgentMessage, ChatMessage>();

/** Keel messages → chat messages; toolResult → `tool` role, `details` never sent. */
export function toChatMessages(system: string | undefined, messages: readonly AgentMessage[]): ChatMessage[] {
  const out: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    let one = converted.get(message);
    if (!one) converted.set(message, (one = deepFrozen(toChatMessage(message))));
    out.push(one);
  }
  return out;
}

function toChatMessage(message: AgentMessage): ChatMessage {
  if (message.role === 'user') {
    if (typeof message.content === 'string') return { role: 'user', content: message.content };
    const parts: ChatPart[] = message.content.flatMap((b): ChatPart[] => {
      if (b.type === 'text') return [{ type: 'text', text: b.text }];
      const url = imageUrl(b);
      return url
        ? [{ type: 'image_url', image_url: { url } }]
        : [{ type: 'text', text: '[image omitted: no source stored]' }];
    });
    return {
      role: 'user',
      content: parts.every((p) => p.type === 'text')
        ? parts.map((p) => (p as { text: string }).text).join('\n')
        : parts,
    };
  }
  if (message.role === 'assistant') {
    const text = message.content.flatMap((b) => (b.type === 'text' ? [(b as TextBlock).text] : [])).join('');
    const calls = message.content.filter(isToolCallBlock).map((b) => ({
      id: b.id,
      type: 'function' as const,
      function: { name: b.name, arguments: JSON.stringify(toolCallArguments(b) ?? {}) },
    }));
    return { role: 'assistant', content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
  }
  return { role: 'tool', tool_call_id: message.toolCallId, content: textOf(message.content) };
}

/** Freezes a converted message and everything in it (all of it made here, from strings). */
function deepFrozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFrozen(inner);
    Object.freeze(value);
  }
  return value;
}

/** Keel tools → `{type:'function', function:{name, description, parameters}}`. */
export function toChatTools(
  tools: readonly ModelTool[],
): Array<{ type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }> {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: { type: 'object', ...t.inputSchema } },
  }));
}

/**
 * A completion's `usage` (the last chunk's, when streamed). `prompt_tokens` counts the whole prompt;
 * `prompt_tokens_details.cached_tokens`, where the server reports it, the part read from its prompt cache.
 */
export const chatUsageSchema = z
  .object({
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
  })
  .nullish();

/**
 * Keel's usage of a completion: prompt tokens read from the cache apart from the rest, as Anthropic
 * reports them. Undefined when the server reported none (some ignore `stream_options.include_usage`):
 * unknown, never zero.
 */
export function chatUsage(usage: z.infer<typeof chatUsageSchema>): ModelUsage | undefined {
  if (!usage) return undefined;
  const prompt = usage.prompt_tokens;
  const cached = Math.min(prompt, usage.prompt_tokens_details?.cached_tokens ?? 0);
  return { input: prompt - cached, output: usage.completion_tokens, cacheRead: cached, cacheWrite: 0 };
}

/** The part of a chat completion Keel reads, validated at the edge. */
export const chatCompletionSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(z.object({ id: z.string(), function: z.object({ name: z.string(), arguments: z.string() }) }))
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: chatUsageSchema,
});

/** A validated chat completion. */
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'stop',
  tool_calls: 'toolUse',
  function_call: 'toolUse',
  length: 'length',
  content_filter: 'refusal',
};

function parseArguments(raw: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(raw);
    return value && typeof value === 'object' && !Array.isArray(value) && !jsonDepthExceeds(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A chat completion's first choice → Keel blocks and stop reason. A tool call whose arguments are
 * not a JSON object gets no `arguments`, so the tool-call repair step drops it.
 */
export function fromChatCompletion(completion: ChatCompletion): { content: AssistantBlock[]; stopReason: StopReason } {
  const choice = completion.choices[0]!;
  const content: AssistantBlock[] = [];
  if (choice.message.content) content.push({ type: 'text', text: choice.message.content });
  for (const call of choice.message.tool_calls ?? []) {
    const args = parseArguments(call.function.arguments);
    content.push({ type: 'toolCall', id: call.id, name: call.function.name, ...(args ? { arguments: args } : {}) });
  }
  const reason = choice.finish_reason ?? 'stop';
  return { content, stopReason: FINISH_REASONS[reason] ?? reason };
}
