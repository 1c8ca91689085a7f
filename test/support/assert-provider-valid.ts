/**
 * The invariant the context pipeline promises: Anthropic would accept these messages. The oracle of
 * the pipeline's tests (the property test); production relies on the pipeline, not on this check.
 */
import { isValidToolName } from '../../src/context/repair-tool-call-inputs';
import { isBlankText } from '../../src/context/message-parts';
import { isToolCallBlock, toolCallArguments, type AgentMessage, type ToolCallBlock } from '../../src/context/types';

/** Rules checked, named in {@link ProviderMessagesInvalidError.rule}. */
export type ProviderRule =
  | 'first-message-from-user'
  | 'roles-alternate'
  | 'no-empty-content'
  | 'tool-use-well-formed'
  | 'tool-use-ids-unique'
  | 'tool-use-answered-next'
  | 'tool-result-answers-previous'
  | 'tool-results-first';

/** Thrown when messages break a provider rule; names the rule and where. */
export class ProviderMessagesInvalidError extends Error {
  override readonly name = 'ProviderMessagesInvalidError';
  constructor(
    /** The rule broken. */
    readonly rule: ProviderRule,
    /** Index in the API-shaped message list (after tool results are merged into user turns). */
    readonly apiIndex: number,
    /** Index of the first of our messages that formed that API message. */
    readonly messageIndex: number,
    readonly detail: string,
  ) {
    super(
      `messages[${messageIndex}] (API message ${apiIndex}) breaks "${rule}": ${detail}. Run runContextPipeline before sending.`,
    );
  }
}

/** A content block of the Anthropic Messages API, as far as these rules need. */
export type ApiBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'image' }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: unknown[]; is_error?: boolean | undefined };

export interface ApiMessage {
  role: 'user' | 'assistant';
  content: ApiBlock[];
  /** Index of the first source message. */
  sourceIndex: number;
}

/**
 * Converts to the Anthropic API shape the way the model edge must: tool results become `tool_result`
 * blocks of a user message, and consecutive user-side messages merge into one, in order.
 */
export function toAnthropicShape(messages: readonly AgentMessage[]): ApiMessage[] {
  const out: ApiMessage[] = [];
  messages.forEach((message, index) => {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = toBlocks(message);
    const last = out[out.length - 1];
    if (role === 'user' && last?.role === 'user') last.content.push(...blocks);
    else out.push({ role, content: blocks, sourceIndex: index });
  });
  return out;
}

/**
 * Throws {@link ProviderMessagesInvalidError} unless Anthropic would accept the messages: the first
 * is from the user; roles alternate (after tool results merge into user turns); no message or text
 * block is empty; tool calls have a non-empty id, a valid name and an object input; tool-use ids are
 * unique; every tool_use is answered by a tool_result in the very next user message, whose
 * tool_result blocks come first; every tool_result answers a tool_use of the message before.
 */
export function assertProviderValid(messages: readonly AgentMessage[]): void {
  const api = toAnthropicShape(messages);
  const fail = (rule: ProviderRule, k: number, detail: string): never => {
    throw new ProviderMessagesInvalidError(rule, k, api[k]?.sourceIndex ?? 0, detail);
  };
  if (api.length === 0) return;
  if (api[0].role !== 'user') fail('first-message-from-user', 0, `the first message is from the ${api[0].role}`);
  const toolUseIds = new Set<string>();

  api.forEach((message, k) => {
    if (k > 0 && api[k - 1].role === message.role) fail('roles-alternate', k, `two ${message.role} messages in a row`);
    if (message.content.length === 0) fail('no-empty-content', k, 'the message has no content blocks');
    for (const block of message.content) {
      if (block.type === 'text' && isBlankText(block.text))
        fail('no-empty-content', k, 'a text block is empty or whitespace');
      if (block.type === 'tool_result') {
        for (const inner of block.content as Array<{ type?: string; text?: unknown }>) {
          if (inner?.type === 'text' && isBlankText(inner.text))
            fail('no-empty-content', k, 'a tool_result text block is empty');
        }
      }
    }

    if (message.role === 'assistant') {
      const uses = message.content.filter((b): b is Extract<ApiBlock, { type: 'tool_use' }> => b.type === 'tool_use');
      for (const use of uses) {
        if (typeof use.id !== 'string' || use.id.trim() === '') fail('tool-use-well-formed', k, 'a tool_use has no id');
        if (!isValidToolName(use.name) || use.name !== use.name.trim())
          fail('tool-use-well-formed', k, `tool name "${use.name}" is invalid`);
        if (typeof use.input !== 'object' || use.input === null || Array.isArray(use.input)) {
          fail('tool-use-well-formed', k, `tool_use ${use.id} has no object input`);
        }
        if (toolUseIds.has(use.id)) fail('tool-use-ids-unique', k, `tool_use id ${use.id} is used twice`);
        toolUseIds.add(use.id);
      }
      if (uses.length > 0) {
        const next = api[k + 1];
        if (!next) fail('tool-use-answered-next', k, `tool_use ${uses[0].id} is the last message, with no result`);
        const answered = new Set(next.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])));
        for (const use of uses) {
          if (!answered.has(use.id))
            fail('tool-use-answered-next', k, `tool_use ${use.id} is not answered in the next message`);
        }
      }
      return;
    }

    const previousUses = new Set((api[k - 1]?.content ?? []).flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])));
    const seenResults = new Set<string>();
    let pastResults = false;
    for (const block of message.content) {
      if (block.type !== 'tool_result') {
        pastResults = true;
        continue;
      }
      if (pastResults) fail('tool-results-first', k, `tool_result ${block.tool_use_id} comes after other content`);
      if (!previousUses.has(block.tool_use_id) || seenResults.has(block.tool_use_id)) {
        fail(
          'tool-result-answers-previous',
          k,
          `tool_result ${block.tool_use_id} answers no tool_use of the previous message`,
        );
      }
      seenResults.add(block.tool_use_id);
    }
  });
}

function toBlocks(message: AgentMessage): ApiBlock[] {
  if (message.role === 'toolResult') {
    return [
      {
        type: 'tool_result',
        tool_use_id: message.toolCallId,
        content: message.content ?? [],
        is_error: message.isError,
      },
    ];
  }
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return (message.content as Array<{ type: string; text?: string; thinking?: string }>).map((block): ApiBlock => {
    if (isToolCallBlock(block)) {
      const call = block as ToolCallBlock;
      return { type: 'tool_use', id: call.id, name: call.name, input: toolCallArguments(call) };
    }
    if (block.type === 'text') return { type: 'text', text: block.text as string };
    if (block.type === 'thinking') return { type: 'thinking', thinking: block.thinking as string };
    if (block.type === 'image') return { type: 'image' };
    return block as ApiBlock; // e.g. a native tool_result block left in a user message
  });
}
