/**
 * What profiling needs of a transcript entry: who wrote it, when, how many tokens it takes and how
 * many tool calls it makes. Small records, so a long session is profiled without holding its payloads.
 */
import type { AgentMessage, TranscriptEntry } from '../context/types';

export interface ProfileEntry {
  readonly id: string;
  readonly kind: 'user' | 'assistant' | 'toolResult' | 'compaction';
  /** Milliseconds since the epoch. */
  readonly at: number;
  /** Estimated tokens in the model's context (a compaction: its summary). */
  readonly tokens: number;
  /** Tool calls an assistant message makes (0 otherwise). */
  readonly toolCalls: number;
  /** A compaction's first kept entry: the active window starts there. */
  readonly firstKeptEntryId?: string;
  /** An operator's revert (`keel compactions revert`): it moves the window but summarizes nothing new. */
  readonly revert?: true;
}

/**
 * One stored entry as a profile record, or undefined for entries the model never sees (headers,
 * custom entries). `tokens` is the estimate stored with the entry when there is one, else
 * `estimate`'s (the worker's own estimator, `boundedEstimate`) of its message or summary.
 */
export function toProfileEntry(
  entry: TranscriptEntry,
  storedTokens: number | null,
  estimate: (message: AgentMessage) => number,
): ProfileEntry | undefined {
  const at = Date.parse(entry.timestamp);
  if (entry.type === 'compaction') {
    const tokens = storedTokens ?? estimate({ role: 'user', content: entry.summary });
    return {
      id: entry.id,
      kind: 'compaction',
      at,
      tokens,
      toolCalls: 0,
      firstKeptEntryId: entry.firstKeptEntryId,
      ...(entry.revertOf ? { revert: true as const } : {}),
    };
  }
  if (entry.type !== 'message') return undefined;
  return messageProfileEntry(entry.id, entry.message, at, storedTokens ?? estimate(entry.message));
}

/** A message as a profile record; `fallbackAt` when the message carries no timestamp of its own. */
export function messageProfileEntry(id: string, m: AgentMessage, fallbackAt: number, tokens: number): ProfileEntry {
  const when = m.timestamp ?? fallbackAt;
  if (m.role === 'assistant')
    return {
      id,
      kind: 'assistant',
      at: when,
      tokens,
      toolCalls: m.content.filter((b) => b.type === 'toolCall').length,
    };
  return { id, kind: m.role, at: when, tokens, toolCalls: 0 };
}
