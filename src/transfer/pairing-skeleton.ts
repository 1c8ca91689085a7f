import type { AgentMessage, TranscriptEntry } from '../context/types';
import { isToolCallBlock } from '../context/types';
import { restoresNoSummary } from '../store/entries-repo';
import { isNativeToolResult } from '../context/repair-tool-use-result-pairing';
import { activeWindowStart } from '../context/active-window';

/** An entry of the file as pairing sees it: its message's skeleton, or the compaction it is. */
interface Skeleton {
  readonly id: string;
  readonly message?: AgentMessage;
  readonly compaction?: { readonly firstKeptEntryId: string; readonly withSummary: boolean };
}

/**
 * The active window of a file imported into an empty session, as pairing skeletons, in the order
 * `loadActiveEntries` would read the rows back: from the last compaction's first kept entry (or
 * after the compaction when that entry is not in the file), its summary first. Undefined from
 * `messages()` when the file is past `maxEntries` (memory stays bounded; read the session back).
 */
export class WindowSkeletons {
  private entries: Skeleton[] = [];
  private usable = true;

  constructor(private readonly maxEntries: number) {}

  add(entry: TranscriptEntry): void {
    if (!this.usable) return;
    if (this.entries.length >= this.maxEntries) return this.giveUp();
    if (entry.type === 'compaction') {
      if (typeof entry.firstKeptEntryId !== 'string') return this.giveUp();
      this.entries.push({
        id: entry.id,
        compaction: { firstKeptEntryId: entry.firstKeptEntryId, withSummary: !restoresNoSummary(entry) },
      });
      return;
    }
    const message = pairingSkeleton(entry);
    this.entries.push(message ? { id: entry.id, message } : { id: entry.id });
  }

  messages(): AgentMessage[] | undefined {
    if (!this.usable) return undefined;
    const out: AgentMessage[] = [];
    const { start, compaction } = activeWindowStart(this.entries, (e) => e.compaction?.firstKeptEntryId);
    // The summary stands first: a user message as far as pairing is concerned.
    if (compaction !== undefined && this.entries[compaction]!.compaction!.withSummary)
      out.push({ role: 'user', content: [{ type: 'text', text: '' }] });
    for (let i = start; i < this.entries.length; i++) {
      const message = this.entries[i]!.message;
      if (message) out.push(message);
    }
    return out;
  }

  private giveUp(): void {
    this.usable = false;
    this.entries = [];
  }
}

/**
 * What the tool-pairing repair reads of a message, and nothing else: roles, stop reasons, tool-call
 * ids and names, result ids and names, and where native `tool_result` blocks sit in user content.
 * The import keeps these for a file's messages instead of the messages themselves, so it can report
 * what the load path's repair will do without reading the session back (`test/transfer/pairing-skeleton.test.ts`
 * compares the repair's counts over skeletons and over the full messages).
 * Undefined for entries that never reach the model's messages (headers, compactions, custom data).
 */
function pairingSkeleton(entry: TranscriptEntry): AgentMessage | undefined {
  // As `activeMessages` maps entries to messages.
  if (entry.type === 'custom_message') return skeletonOf({ role: 'user', content: entry.content });
  if (entry.type !== 'message') return undefined;
  return skeletonOf(entry.message);
}

function skeletonOf(message: AgentMessage): AgentMessage {
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant',
        stopReason: message.stopReason,
        content: Array.isArray(message.content)
          ? message.content
              .filter((b) => !!b && typeof b === 'object' && isToolCallBlock(b))
              .map(
                (b) =>
                  ({
                    type: b.type,
                    id: (b as { id: string }).id,
                    name: (b as { name: string }).name,
                  }) as AgentMessageBlock,
              )
          : [],
      };
    case 'toolResult':
      return { role: 'toolResult', toolCallId: message.toolCallId, toolName: message.toolName, content: [] };
    case 'user':
      return {
        role: 'user',
        // A native result block keeps its id; any other block stays as an empty placeholder, so a user
        // message split around its results keeps its place in the span.
        content: Array.isArray(message.content)
          ? (message.content as unknown[]).map((b) =>
              isNativeToolResult(b)
                ? ({ type: 'tool_result', tool_use_id: b.tool_use_id } as unknown as UserBlock)
                : { type: 'text', text: '' },
            )
          : '',
      };
    default:
      // A role the repair treats as any other message.
      return { role: (message as { role: string }).role, content: '' } as unknown as AgentMessage;
  }
}

type AgentMessageBlock = Extract<AgentMessage, { role: 'assistant' }>['content'][number];
type UserBlock = Exclude<Extract<AgentMessage, { role: 'user' }>['content'], string>[number];
