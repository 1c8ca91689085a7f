import { z } from 'zod';
import type { ToolCallBlock, ToolResultMessage } from '../context/types';
import { toolCallArguments } from '../context/types';
import type { ModelTool } from '../model/model-client';
import { SILENT_REPLY_TOKEN } from '../context/silent-reply';
import type { MemoryCheckpoint } from '../context/prompt-sections';

/** The silent turn's instruction (OpenClaw's pre-compaction flush, in Keel's words). */
export const MEMORY_FLUSH_PROMPT = [
  'Pre-compaction memory flush: the conversation will soon be compacted and older details summarized.',
  'Write anything worth remembering durably (decisions, facts about the user, open tasks, identifiers) with the memory_write tool, one note per call.',
  'Then save where the work stands with memory_checkpoint (current task, key state, decisions, files changed, next steps); you will see it after the compaction.',
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

const text = (description: string) => ({ type: 'string', description });
const list = (description: string) => ({ type: 'array', items: { type: 'string' }, description });

/** The structured checkpoint, read back into the system prompt after the compaction. */
export const MEMORY_CHECKPOINT_TOOL: ModelTool = {
  name: 'memory_checkpoint',
  description: 'Save where the work stands (call once); shown to you after the compaction.',
  inputSchema: {
    type: 'object',
    properties: {
      currentTask: text('What you are working on now.'),
      keyState: text('State needed to go on (values, identifiers, what is half done).'),
      decisions: list('Decisions made and why.'),
      filesChanged: list('Files created or changed.'),
      nextSteps: list('What to do next, in order.'),
    },
  },
};

const MAX_FIELD_CHARS = 2_000;
const field = z.string().trim().max(MAX_FIELD_CHARS).optional();
const items = z.array(z.string().trim().min(1).max(MAX_FIELD_CHARS)).max(50).optional();
const checkpointInput = z.object({
  currentTask: field,
  keyState: field,
  decisions: items,
  filesChanged: items,
  nextSteps: items,
});

/** Longest note kept; the flush is for durable facts, not transcripts. */
const MAX_NOTE_CHARS = 4_000;

/**
 * Reads the notes out of memory_write calls and the checkpoint out of memory_checkpoint (the last
 * valid one wins), and answers every call (anything else gets an error result).
 */
export function collectMemoryWrites(calls: readonly ToolCallBlock[]): {
  notes: string[];
  checkpoint?: MemoryCheckpoint;
  results: ToolResultMessage[];
} {
  const notes: string[] = [];
  let checkpoint: MemoryCheckpoint | undefined;
  const results = calls.map((call): ToolResultMessage => {
    if (call.name === 'memory_checkpoint') {
      const parsed = checkpointInput.safeParse(toolCallArguments(call) ?? {});
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
        return {
          role: 'toolResult',
          toolCallId: call.id,
          toolName: call.name,
          isError: true,
          content: [{ type: 'text', text: `invalid checkpoint: ${issues}` }],
        };
      }
      checkpoint = Object.fromEntries(
        Object.entries(parsed.data).filter(([, v]) => v !== undefined && v !== ''),
      ) as MemoryCheckpoint;
      return {
        role: 'toolResult',
        toolCallId: call.id,
        toolName: call.name,
        content: [{ type: 'text', text: 'checkpoint saved' }],
      };
    }
    const text = toolCallArguments(call)?.text;
    if (call.name !== 'memory_write' || typeof text !== 'string' || text.trim() === '') {
      return {
        role: 'toolResult',
        toolCallId: call.id,
        toolName: call.name,
        isError: true,
        content: [
          { type: 'text', text: 'only memory_write with a non-empty "text" and memory_checkpoint are available now' },
        ],
      };
    }
    notes.push(text.trim().slice(0, MAX_NOTE_CHARS));
    return { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: 'saved' }] };
  });
  return { notes, ...(checkpoint ? { checkpoint } : {}), results };
}
