/** Tiny transcript factories for compaction tests. Text sizes are in "tokens" of the chars/4 estimator. */
import type { AgentMessage, AssistantMessage, ToolResultMessage, UserMessage } from '../../src/context/types';
import type { PlanEntry } from '../../src/compaction/types';
import { messageText } from '../../src/compaction/serialize-for-summary';

/** Deterministic estimator: 1 token per 4 characters of visible text, at least 1. */
export const charsOver4 = (m: AgentMessage): number => Math.max(1, Math.ceil(messageText(m).length / 4));

/** Text of about `tokens` tokens for `charsOver4`. */
export const text = (tokens: number, seed = 'x'): string => seed.repeat(tokens * 4).slice(0, tokens * 4);

export const user = (content: string, timestamp?: number): UserMessage => ({
  role: 'user',
  content,
  ...(timestamp ? { timestamp } : {}),
});
export const assistant = (content: string, timestamp?: number): AssistantMessage => ({
  role: 'assistant',
  content: [{ type: 'text', text: content }],
  stopReason: 'stop',
  ...(timestamp ? { timestamp } : {}),
});
export const call = (ids: string[], stopReason = 'toolUse'): AssistantMessage => ({
  role: 'assistant',
  content: ids.map((id) => ({ type: 'toolCall' as const, id, name: 'read', arguments: { path: `/f/${id}` } })),
  stopReason,
});
export const result = (id: string, content: string, details?: unknown): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: 'read',
  content: [{ type: 'text', text: content }],
  ...(details !== undefined ? { details } : {}),
});

/** Entries e0, e1, … for messages. */
export const entries = (messages: AgentMessage[]): PlanEntry[] =>
  messages.map((message, i) => ({ id: `e${i}`, message }));
