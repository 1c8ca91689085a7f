/** A page of a child's transcript as the parent reads it: one line per entry, long parts cut. */
import {
  isToolCallBlock,
  toolCallArguments,
  type AgentMessage,
  type ToolCallBlock,
  type TranscriptEntry,
} from '../context/types';

const PART_CHARS = 600;

export function renderHistoryEntry(entry: TranscriptEntry): string | undefined {
  if (entry.type === 'compaction') return `[compaction summary] ${cut(entry.summary)}`;
  if (entry.type !== 'message') return undefined;
  return renderMessage(entry.message);
}

function renderMessage(m: AgentMessage): string {
  if (m.role === 'user') return `user: ${cut(typeof m.content === 'string' ? m.content : textOf(m.content))}`;
  if (m.role === 'toolResult')
    return `tool result ${m.toolName}${m.isError ? ' (error)' : ''}: ${cut(textOf(m.content))}`;
  const parts = m.content.map((b) => {
    if (b.type === 'text') return cut((b as { text: string }).text);
    if (isToolCallBlock(b))
      return `→ ${(b as ToolCallBlock).name}(${cut(JSON.stringify(toolCallArguments(b as ToolCallBlock) ?? {}), 200)})`;
    return `[${b.type}]`;
  });
  return `assistant: ${parts.join(' ')}`;
}

function textOf(content: ReadonlyArray<{ readonly type: string; readonly text?: string }>): string {
  return content.map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join(' ');
}

function cut(text: string, max = PART_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}… (+${flat.length - max} chars)` : flat;
}
