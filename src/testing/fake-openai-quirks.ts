/**
 * The ways a local OpenAI-compatible server (llama-cpp-python 0.3 serving a GGUF, as Keel's bench
 * runs it) differs from OpenAI, as options of the fake so CI covers each one. All off by default.
 */
import type { FakeRequestBody } from './fake-anthropic';
import type { FakeErrorStep, FakeMessageStep } from './fake-anthropic-steps';

/** What the fake's chat-completions endpoint does differently from OpenAI. */
export interface FakeOpenAiQuirks {
  /** A streamed request longer than the window gets `200`, `text/event-stream` and an empty body (unstreamed: the 400). */
  emptyStreamOnOverflow?: boolean;
  /** `stream_options.include_usage` is ignored: a stream carries no usage. */
  noStreamUsage?: boolean;
  /** One slot: a stream in flight when another request arrives ends at once with `[DONE]` and no finish_reason. */
  interruptOnNewRequest?: boolean;
  /** `tools` without `tool_choice` means "none": the model never sees the tools, so the reply has no tool calls. */
  toolChoiceDefaultsToNone?: boolean;
  /** A streamed request with tools and `tool_choice: "auto"` is refused with the server's 500. */
  noStreamingToolChoice?: boolean;
}

/** llama-cpp-python's words when asked to stream with automatic tool choice. */
export const STREAMING_TOOL_CHOICE_REFUSAL = 'Automatic streaming tool choice is not supported';

/** The 500 a server without streamed tool choice answers, or undefined. */
export function streamingToolChoiceRefusal(body: FakeRequestBody, quirks: FakeOpenAiQuirks): FakeErrorStep | undefined {
  const withTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (!quirks.noStreamingToolChoice || body.stream !== true || !withTools || body.tool_choice !== 'auto')
    return undefined;
  return { kind: 'error', status: 500, errorType: 'api_error', message: STREAMING_TOOL_CHOICE_REFUSAL };
}

/**
 * The step as the model answers when it was not offered the tools (`tool_choice` "none", or left out
 * on a server whose default is "none"): the scripted tool calls never happen, only the text does.
 */
export function withToolChoice(
  step: FakeMessageStep,
  body: FakeRequestBody,
  quirks: FakeOpenAiQuirks,
): FakeMessageStep {
  const choice = body.tool_choice ?? (quirks.toolChoiceDefaultsToNone ? 'none' : 'auto');
  if (choice !== 'none' || !step.content.some((b) => b.type === 'tool_use')) return step;
  const content = step.content.filter((b) => b.type !== 'tool_use');
  return { ...step, content: content.length > 0 ? content : [{ type: 'text', text: '' }], stopReason: 'end_turn' };
}

/** The streams in flight on a one-slot server: a new request interrupts them all. */
export class FakeOpenAiSlot {
  readonly #streams = new Set<{ interrupted: boolean }>();

  /** A stream starts; its `interrupted` turns true when another request arrives before it ends. */
  open(): { interrupted: boolean; close: () => void } {
    const stream = { interrupted: false, close: () => void this.#streams.delete(stream) };
    this.#streams.add(stream);
    return stream;
  }

  /** A new request arrived: every stream in flight is cut short. */
  interruptAll(): void {
    for (const stream of this.#streams) stream.interrupted = true;
  }
}
