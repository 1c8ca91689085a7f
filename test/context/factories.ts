/** Tiny message factories for context tests. */
import type {
  AgentMessage,
  AssistantMessage,
  ToolCallBlock,
  ToolResultMessage,
  UserMessage,
} from '../../src/context/types';

export const user = (text: string): UserMessage => ({ role: 'user', content: text });

export const call = (id: string, name = 'read', args: Record<string, unknown> = { path: 'a.txt' }): ToolCallBlock => ({
  type: 'toolCall',
  id,
  name,
  arguments: args,
});

export const assistant = (...blocks: Array<string | ToolCallBlock>): AssistantMessage => ({
  role: 'assistant',
  content: blocks.map((b) => (typeof b === 'string' ? { type: 'text' as const, text: b } : b)),
  stopReason: blocks.some((b) => typeof b !== 'string') ? 'toolUse' : 'stop',
});

export const result = (id: string, text = `output of ${id}`, toolName = 'read'): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: id,
  toolName,
  content: [{ type: 'text', text }],
  isError: false,
});

/** A compact picture of a transcript for assertions: u:text, a:[ids], r:id. */
export function shape(messages: AgentMessage[]): string[] {
  return messages.map((m) => {
    if (m.role === 'user')
      return `u:${typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : b.type)).join('|')}`;
    if (m.role === 'toolResult') return `r:${m.toolCallId}${m.isError ? '!' : ''}`;
    const calls = m.content.filter((b) => b.type !== 'text' && b.type !== 'thinking') as ToolCallBlock[];
    const text = m.content
      .filter((b) => b.type === 'text')
      .map((b) => (b as { text: string }).text)
      .join('|');
    return calls.length > 0 ? `a:${text}[${calls.map((c) => c.id).join(',')}]` : `a:${text}`;
  });
}
