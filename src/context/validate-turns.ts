/**
 * Provider turn validation (OpenClaw's validateAnthropicTurns / validateGeminiTurns, one walk with per-provider rules): reshapes a
 * paired transcript into turns the provider accepts without losing user text.
 */
import { hasPartialStop, isBlankText, toolCallsOf } from './message-parts';
import {
  isToolCallBlock,
  type AgentMessage,
  type AssistantMessage,
  type ToolResultMessage,
  type UserContent,
  type UserMessage,
} from './types';

/** Which provider rules to enforce. */
export interface TurnRules {
  /** Gemini also merges consecutive assistant (model) turns that carry tool calls. */
  mergeAssistantsWithToolCalls: boolean;
}

export interface TurnValidationReport {
  /** Tool-call blocks removed from `error`/`aborted` assistant messages (partial calls). */
  strippedPartialToolCalls: number;
  /** Tool results removed because their call was one of those partial calls. */
  droppedPartialToolResults: number;
  /** Messages removed because their content was empty or whitespace only. */
  droppedEmptyMessages: number;
  /** Assistant/tool-result messages removed because they came before the first user message. */
  droppedLeadingMessages: number;
  /** User messages merged into the preceding user message. */
  mergedUserMessages: number;
  /** Assistant messages merged into the following assistant message. */
  mergedAssistantMessages: number;
}

export interface TurnValidationResult {
  /** The validated messages; the input array itself when nothing changed. */
  messages: AgentMessage[];
  report: TurnValidationReport;
}

/** The validation walk with its report (used by the pipeline). */
export function validateTurns(messages: AgentMessage[], rules: TurnRules): TurnValidationResult {
  const report: TurnValidationReport = {
    strippedPartialToolCalls: 0,
    droppedPartialToolResults: 0,
    droppedEmptyMessages: 0,
    droppedLeadingMessages: 0,
    mergedUserMessages: 0,
    mergedAssistantMessages: 0,
  };
  const partialCallIds = new Set<string>();
  const out: AgentMessage[] = [];
  let changed = false;

  for (const original of messages) {
    if (original.role === 'toolResult' && partialCallIds.has(original.toolCallId)) {
      report.droppedPartialToolResults += 1;
      changed = true;
      continue;
    }
    const stripped =
      original.role === 'assistant' && hasPartialStop(original)
        ? stripPartialCalls(original, partialCallIds, report)
        : original;
    const message = dropBlankContent(stripped);
    if (!message) {
      report.droppedEmptyMessages += 1;
      changed = true;
      continue;
    }
    if (message !== original) changed = true;
    // Providers require the conversation to open with the user; nothing before it can be answered.
    if (out.length === 0 && message.role !== 'user') {
      report.droppedLeadingMessages += 1;
      changed = true;
      continue;
    }
    const previous = out[out.length - 1];
    if (message.role === 'user' && previous?.role === 'user') {
      out[out.length - 1] = mergeUser(previous, message);
      report.mergedUserMessages += 1;
      changed = true;
      continue;
    }
    if (
      message.role === 'assistant' &&
      previous?.role === 'assistant' &&
      (rules.mergeAssistantsWithToolCalls || toolCallsOf(previous).length === 0)
    ) {
      out[out.length - 1] = { ...message, content: [...previous.content, ...message.content] };
      report.mergedAssistantMessages += 1;
      changed = true;
      continue;
    }
    out.push(message);
  }
  return { messages: changed ? out : messages, report };
}

/** Removes tool calls from an error/aborted assistant message, remembering their ids. */
function stripPartialCalls(
  message: AssistantMessage,
  partialCallIds: Set<string>,
  report: TurnValidationReport,
): AssistantMessage {
  const calls = toolCallsOf(message);
  if (calls.length === 0) return message;
  for (const call of calls) if (typeof call.id === 'string') partialCallIds.add(call.id);
  report.strippedPartialToolCalls += calls.length;
  return { ...message, content: message.content.filter((b) => !isToolCallBlock(b)) };
}

/** Drops blank text blocks; undefined when a user/assistant message is left with nothing to send. */
function dropBlankContent(message: AgentMessage): AgentMessage | undefined {
  if (message.role === 'user') {
    if (typeof message.content === 'string') return isBlankText(message.content) ? undefined : message;
    const blocks = message.content.filter((b) => b.type !== 'text' || !isBlankText(b.text));
    if (blocks.length === 0) return undefined;
    return blocks.length === message.content.length ? message : { ...message, content: blocks };
  }
  if (message.role === 'assistant') {
    const blocks = message.content.filter((b) => {
      if (b.type === 'text') return !isBlankText(b.text);
      if (b.type === 'thinking') return !isBlankText(b.thinking);
      return true;
    });
    if (blocks.length === 0) return undefined;
    return blocks.length === message.content.length ? message : { ...message, content: blocks };
  }
  // A tool result must stay (its call needs it); only its blank text blocks go.
  const blocks = message.content.filter((b) => b.type !== 'text' || !isBlankText(b.text));
  return blocks.length === message.content.length
    ? message
    : ({ ...message, content: blocks } satisfies ToolResultMessage);
}

/** Merges two user messages, keeping every piece of both in order. */
function mergeUser(first: UserMessage, second: UserMessage): UserMessage {
  const content: UserContent =
    typeof first.content === 'string' && typeof second.content === 'string'
      ? `${first.content}\n\n${second.content}`
      : [...asBlocks(first.content), ...asBlocks(second.content)];
  return { ...second, content };
}

function asBlocks(content: UserContent): Exclude<UserContent, string> {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}
