/**
 * A streamed chat completion (`stream: true`): each SSE `data:` is a `chat.completion.chunk`, an
 * `{error}` object, or `[DONE]`. `ChatStreamAccumulator` folds the chunks into the same
 * `ChatCompletion` a non-streamed answer has, and reports progress events on the way.
 */
import { z } from 'zod';
import type { ModelStreamEvent } from './model-client';
import { chatUsageSchema, type ChatCompletion } from './openai-compatible-convert';

/** The part of a `chat.completion.chunk` Keel reads; unknown fields pass. */
export const chatChunkSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        index: z.number().optional(),
        delta: z
          .object({
            content: z.string().nullish(),
            // Reasoning servers stream thinking under either name; it only keeps heartbeats going.
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().optional(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: chatUsageSchema,
});

export type ChatChunk = z.infer<typeof chatChunkSchema>;

/** An error a server sends inside the stream instead of a chunk. */
export interface ChatStreamError {
  message: string;
  type: string | undefined;
  code: string | undefined;
}

/** One SSE `data:` payload, read. */
export type ChatStreamData =
  | { kind: 'done' }
  | { kind: 'chunk'; chunk: ChatChunk }
  | { kind: 'error'; error: ChatStreamError }
  | { kind: 'invalid'; why: string };

/** Reads one `data:` payload. */
export function parseChatStreamData(data: string): ChatStreamData {
  if (data.trim() === '[DONE]') return { kind: 'done' };
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { kind: 'invalid', why: `not JSON: ${data.slice(0, 200)}` };
  }
  const error = (json as { error?: unknown } | null)?.error;
  if (error !== undefined && error !== null) {
    const fields = (typeof error === 'object' ? error : { message: error }) as {
      message?: unknown;
      type?: unknown;
      code?: unknown;
    };
    return {
      kind: 'error',
      error: {
        message: typeof fields.message === 'string' ? fields.message : JSON.stringify(error),
        type: typeof fields.type === 'string' ? fields.type : undefined,
        code: typeof fields.code === 'string' ? fields.code : undefined,
      },
    };
  }
  const parsed = chatChunkSchema.safeParse(json);
  return parsed.success
    ? { kind: 'chunk', chunk: parsed.data }
    : { kind: 'invalid', why: `not a chat.completion.chunk: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
}

interface ToolCallSlot {
  id: string | undefined;
  name: string;
  arguments: string;
  started: boolean;
}

/** Folds the first choice's deltas; tool calls are keyed by their `index` (by `id` when a server sends none). */
export class ChatStreamAccumulator {
  #text = '';
  #slots: ToolCallSlot[] = [];
  #finishReason: string | undefined;
  #usage: ChatCompletion['usage'];
  #model: string | undefined;
  #chunks = 0;

  /** Text so far. */
  get text(): string {
    return this.#text;
  }

  /** True once a choice carried its `finish_reason`. */
  get finished(): boolean {
    return this.#finishReason !== undefined;
  }

  /** Adds one chunk; returns the progress events it carries, in order. */
  add(chunk: ChatChunk): ModelStreamEvent[] {
    const events: ModelStreamEvent[] = [];
    if (this.#chunks++ === 0) events.push({ type: 'messageStart' });
    if (chunk.model) this.#model = chunk.model;
    if (chunk.usage) this.#usage = chunk.usage;
    const choice = chunk.choices.find((c) => (c.index ?? 0) === 0);
    if (!choice) return events;
    const delta = choice.delta;
    const thinking = delta?.reasoning_content ?? delta?.reasoning;
    if (thinking) events.push({ type: 'thinking', delta: thinking });
    if (delta?.content) {
      this.#text += delta.content;
      events.push({ type: 'text', delta: delta.content });
    }
    for (const call of delta?.tool_calls ?? []) {
      const slot = this.#slotFor(call.index, call.id ?? undefined);
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.name += call.function.name;
      if (!slot.started && slot.name) {
        slot.started = true;
        events.push({ type: 'toolCallStart', id: slot.id ?? '', name: slot.name });
      }
      const fragment = call.function?.arguments;
      if (fragment) {
        slot.arguments += fragment;
        events.push({ type: 'toolCallInput', partialJson: fragment });
      }
    }
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    return events;
  }

  #slotFor(index: number | undefined, id: string | undefined): ToolCallSlot {
    let at = index;
    if (at === undefined) {
      const byId = id === undefined ? -1 : this.#slots.findIndex((s) => s?.id === id);
      // No index: a new id opens a call; a fragment without one continues the last call.
      at = byId !== -1 ? byId : id !== undefined ? this.#slots.length : Math.max(0, this.#slots.length - 1);
    }
    return (this.#slots[at] ??= { id: undefined, name: '', arguments: '', started: false });
  }

  /** The whole reply as a chat completion (for `fromChatCompletion`); calls without an id get one. */
  completion(fallbackModel: string): ChatCompletion {
    const calls = this.#slots.flatMap((s, i) =>
      s ? [{ id: s.id ?? `call_${i}`, function: { name: s.name, arguments: s.arguments } }] : [],
    );
    return {
      model: this.#model ?? fallbackModel,
      choices: [
        {
          message: { content: this.#text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
          finish_reason: this.#finishReason ?? null,
        },
      ],
      usage: this.#usage,
    };
  }
}
