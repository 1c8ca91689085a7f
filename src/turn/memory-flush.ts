import type { ToolCallBlock, ToolResultMessage } from '../context/types';
import { toolCallArguments } from '../context/types';
import type { ModelTool } from '../model/model-client';
import { SILENT_REPLY_TOKEN } from '../context/silent-reply';

/** The silent turn's instruction (OpenClaw's pre-compaction flush, in Keel's words). */
export const MEMORY_FLUSH_PROMPT = [
  'Pre-compaction memory flush: the conversation will soon be compacted and older details summarized.',
  'Write anything worth remembering durably (decisions, facts about the user, open tasks, identifiers) with the memory_write tool, one note per call.',
  `When you are done, or if there is nothing to store, reply with exactly ${SILENT_REPLY_TOKEN}.`,
].join('\n');

/** The one tool the flush turn has. */
export const MEMORY_WRITE_TOOL: ModelTool = {
  name: 'memory_write',
  description: 'Store one durable note that must survive context compaction.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', description: 'The note, self-contained.' } },
    required: ['text'],
  },
};

/** Longest note kept; the flush is for durable facts, not transcripts. */
const MAX_NOTE_CHARS = 4_000;

/** Reads the notes out of memory_write calls and answers every call (others get an error result). */
export function collectMemoryWrites(calls: readonly ToolCallBlock[]): { notes: string[]; results: ToolResultMessage[] } {
  const notes: string[] = [];
  const results = calls.map((call): ToolResultMessage => {
    const text = toolCallArguments(call)?.text;
    if (call.name !== 'memory_write' || typeof text !== 'string' || text.trim() === '') {
      return { role: 'toolResult', toolCallId: call.id, toolName: call.name, isError: true, content: [{ type: 'text', text: 'only memory_write with a non-empty "text" is available now' }] };
    }
    notes.push(text.trim().slice(0, MAX_NOTE_CHARS));
    return { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: 'saved' }] };
  });
  return { notes, results };
}
