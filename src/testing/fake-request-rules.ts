/**
 * The request rules the real APIs enforce on every call, checked by the fake before any script step
 * or responder sees the request: a `tool_use` must be answered by a `tool_result` in the very next
 * message, and a `tool_result` must answer a `tool_use` of the message before it (OpenAI: `tool`
 * messages answer the preceding assistant `tool_calls`). Messages are worded as the providers word them.
 */
import type { FakeRequestBody } from './fake-anthropic';

type Block = { type?: string; id?: string; tool_use_id?: string };

const blocksOf = (content: unknown): Block[] => (Array.isArray(content) ? (content as Block[]) : []);

/** Anthropic Messages API: the 400 `invalid_request_error` message for broken tool pairing, or undefined. */
export function anthropicPairingProblem(body: FakeRequestBody): string | undefined {
  const messages = body.messages ?? [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const blocks = blocksOf(message.content);
    if (message.role === 'assistant') {
      const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => b.id ?? '');
      const answered = new Set(
        blocksOf(messages[i + 1]?.role === 'user' ? messages[i + 1]!.content : []).map((b) => b.tool_use_id),
      );
      const missing = uses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
    if (message.role === 'user') {
      const previous = messages[i - 1];
      const uses = new Set(
        previous?.role === 'assistant'
          ? blocksOf(previous.content)
              .filter((b) => b.type === 'tool_use')
              .map((b) => b.id)
          : [],
      );
      const j = blocks.findIndex((b) => b.type === 'tool_result' && !uses.has(b.tool_use_id));
      if (j >= 0) {
        return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${blocks[j]!.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
  }
  return undefined;
}

/**
 * Anthropic Messages API: the 400 message for a custom tool whose `input_schema` is not a JSON
 * Schema object of type "object", worded as the API words it, or undefined.
 */
export function anthropicToolSchemaProblem(body: FakeRequestBody): string | undefined {
  const tools = body.tools ?? [];
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]!;
    // Server tools (web search, bash, ...) carry a versioned `type` and no schema.
    if (typeof tool.type === 'string' && tool.type !== 'custom') continue;
    const where = `tools.${i}.custom.input_schema`;
    const schema: unknown = tool.input_schema;
    if (schema === undefined) return `${where}: Field required`;
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
      return `${where}: Input should be a valid dictionary`;
    const s = schema as Record<string, unknown>;
    if (s.oneOf !== undefined || s.allOf !== undefined || s.anyOf !== undefined)
      return `${where}: input_schema does not support oneOf, allOf, or anyOf at the top level`;
    if (s.type === undefined) return `${where}.type: Field required`;
    if (s.type !== 'object') return `${where}.type: Input should be 'object'`;
  }
  return undefined;
}

/** OpenAI-compatible chat completions: the 400 message for a function whose parameters are not an object schema, or undefined. */
export function openAiToolSchemaProblem(body: FakeRequestBody): string | undefined {
  for (const tool of body.tools ?? []) {
    const fn = tool.function as { name?: string; parameters?: { type?: unknown } } | undefined;
    const type = fn?.parameters?.type;
    if (fn?.parameters !== undefined && type !== 'object') {
      return `Invalid schema for function '${fn.name ?? ''}': schema must be a JSON Schema of 'type: "object"', got 'type: "${String(type)}"'.`;
    }
  }
  return undefined;
}

/** OpenAI-compatible chat completions: the 400 message for broken tool-call pairing, or undefined. */
export function openAiPairingProblem(body: FakeRequestBody): string | undefined {
  const messages = (body.messages ?? []) as Array<{
    role: string;
    tool_calls?: Array<{ id: string }>;
    tool_call_id?: string;
  }>;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === 'tool') {
      let k = i - 1;
      while (k >= 0 && messages[k]!.role === 'tool') k--;
      const calls = new Set((messages[k]?.tool_calls ?? []).map((c) => c.id));
      if (!calls.has(message.tool_call_id ?? '')) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
    }
    if (message.role === 'assistant' && message.tool_calls?.length) {
      const answered = new Set<string>();
      for (let k = i + 1; k < messages.length && messages[k]!.role === 'tool'; k++)
        answered.add(messages[k]!.tool_call_id ?? '');
      const missing = message.tool_calls.map((c) => c.id).filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`;
      }
    }
  }
  return undefined;
}

/**
 * `tool_choice` as both APIs check it: only beside tools, and one of the kinds Keel sends
 * (Anthropic `{ type: "auto" | "none" | "any" | "tool" }`, OpenAI `"auto" | "none" | "required"` or a function).
 */
export function toolChoiceProblem(body: { readonly [key: string]: unknown }): string | undefined {
  const choice = body.tool_choice;
  if (choice === undefined) return undefined;
  if (!Array.isArray(body.tools) || body.tools.length === 0)
    return 'tool_choice: tool_choice may only be specified while providing tools.';
  const kind = typeof choice === 'string' ? choice : (choice as { type?: unknown }).type;
  if (!['auto', 'none', 'any', 'tool', 'required', 'function'].includes(String(kind)))
    return `tool_choice: unknown tool choice ${JSON.stringify(choice)}`;
  return undefined;
}

/** The request forbids tool calls (`tool_choice` none, in either API's shape). */
export function toolChoiceIsNone(body: { readonly [key: string]: unknown }): boolean {
  const choice = body.tool_choice;
  return (
    choice === 'none' ||
    (typeof choice === 'object' && choice !== null && (choice as { type?: unknown }).type === 'none')
  );
}

/** A scripted answer that calls a tool. */
export function stepCallsATool(step: { kind: string; content?: ReadonlyArray<{ type: string }> }): boolean {
  return step.kind === 'message' && (step.content ?? []).some((b) => b.type === 'tool_use');
}
