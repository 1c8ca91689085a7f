import type { AgentMessage, CompactionEntry, TranscriptEntry, UserMessage } from './types';

/** An entry as the store returns it: its id plus the JSONL entry object. */
export interface StoredEntry {
  readonly id: string;
  readonly entry: TranscriptEntry;
}

/** The message that stands in for everything a compaction summarized (as OpenClaw: the first user message). */
export function summaryMessage(compaction: CompactionEntry): UserMessage {
  return {
    role: 'user',
    content: [{ type: 'text', text: `<summary>\nThe conversation so far was compacted. Summary of the earlier history:\n\n${compaction.summary}\n</summary>` }],
  };
}

/**
 * What the model may see, in order: the last compaction's summary (when there is one), then every
 * message-like entry from firstKeptEntryId on. Headers, custom data and branch summaries are not sent.
 */
export function activeMessages(compaction: CompactionEntry | undefined, entries: readonly StoredEntry[]): AgentMessage[] {
  const messages: AgentMessage[] = [];
  if (compaction) messages.push(summaryMessage(compaction));
  for (const { entry } of entries) {
    if (entry.type === 'message') messages.push(entry.message);
    else if (entry.type === 'custom_message') messages.push({ role: 'user', content: entry.content });
  }
  return messages;
}
