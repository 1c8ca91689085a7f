import type { AgentMessage, CompactionEntry, TranscriptEntry, UserMessage } from './types';

/** An entry as the store returns it: its id plus the JSONL entry object. */
export interface StoredEntry {
  readonly id: string;
  readonly entry: TranscriptEntry;
}

/** The message entries a compaction summarized, named in its wrapper (see `SummarizedRange` in the store). */
export interface SummaryRange {
  readonly firstEntryId: string;
  readonly lastEntryId: string;
  readonly messages: number;
}

/**
 * The message that stands in for everything a compaction summarized (as OpenClaw: the first user
 * message). The wrapper, not the stored summary, names the compaction and its range, so the model
 * knows what `history_expand` can bring back.
 */
export function summaryMessage(compaction: CompactionEntry, range?: SummaryRange): UserMessage {
  const what = range
    ? `Compaction ${compaction.id} summarized entries ${range.firstEntryId}…${range.lastEntryId} (${range.messages} messages)`
    : `Compaction ${compaction.id} summarized the earlier entries`;
  const text = `<summary>\nThe conversation so far was compacted. ${what}; use history_expand with this id for details.\nSummary of the earlier history:\n\n${compaction.summary}\n</summary>`;
  return { role: 'user', content: [{ type: 'text', text }] };
}

/**
 * What the model may see, in order: the last compaction's summary (when there is one), then every
 * message-like entry from firstKeptEntryId on. Headers, custom data and branch summaries are not sent.
 */
export function activeMessages(compaction: CompactionEntry | undefined, entries: readonly StoredEntry[], range?: SummaryRange): AgentMessage[] {
  const messages: AgentMessage[] = [];
  if (compaction) messages.push(summaryMessage(compaction, range));
  for (const { entry } of entries) {
    if (entry.type === 'message') messages.push(entry.message);
    else if (entry.type === 'custom_message') messages.push({ role: 'user', content: entry.content });
  }
  return messages;
}
