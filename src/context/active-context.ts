import type { AgentMessage, CompactionEntry, TranscriptEntry, UserMessage } from './types';
import { cancelledTurnsIn, withoutCancelledTurns } from './cancelled-turns';

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
 * message-like entry from firstKeptEntryId on, but for cancelled turns'. Headers, custom data and
 * branch summaries are not sent.
 */
export function activeMessages(
  compaction: CompactionEntry | undefined,
  entries: readonly StoredEntry[],
  range?: SummaryRange,
): AgentMessage[] {
  const messages: AgentMessage[] = [];
  if (compaction) messages.push(summaryMessageOf(compaction, range));
  for (const { entry } of withoutCancelledTurns(entries, cancelledTurnsIn(entries))) {
    if (entry.type === 'message') messages.push(entry.message);
    else if (entry.type === 'custom_message') messages.push(customMessageOf(entry));
  }
  return messages;
}

/**
 * The messages made from entries, kept by entry object: a cached window gives every turn the same
 * message objects, so the pipeline and the model conversion see what they already saw
 * (`IncrementalPipeline`, `toAnthropicMessages`).
 */
const summaries = new WeakMap<CompactionEntry, { range: SummaryRange | undefined; message: UserMessage }>();
const customMessages = new WeakMap<TranscriptEntry, UserMessage>();

function summaryMessageOf(compaction: CompactionEntry, range: SummaryRange | undefined): UserMessage {
  const known = summaries.get(compaction);
  if (known && sameRange(known.range, range)) return known.message;
  const message = summaryMessage(compaction, range);
  summaries.set(compaction, { range, message });
  return message;
}

function customMessageOf(entry: Extract<TranscriptEntry, { type: 'custom_message' }>): UserMessage {
  let message = customMessages.get(entry);
  if (!message) customMessages.set(entry, (message = { role: 'user', content: entry.content }));
  return message;
}

function sameRange(a: SummaryRange | undefined, b: SummaryRange | undefined): boolean {
  return (
    a === b ||
    (!!a && !!b && a.firstEntryId === b.firstEntryId && a.lastEntryId === b.lastEntryId && a.messages === b.messages)
  );
}
