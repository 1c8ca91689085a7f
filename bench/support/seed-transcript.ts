import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema';
import type { AgentMessage, CompactionEntry, MessageEntry, TranscriptEntry } from '../../src/context/types';
import { appendEntries, type EntryToAppend } from '../../src/store/entries-repo';

/** Rows per INSERT: 10 columns × 1,000 rows stays far below PostgreSQL's 65,535 bind parameters. */
const SEED_BATCH_ROWS = 1_000;

/** What to put in a session before a bench drives turns on it. */
export interface SeedOptions {
  /** Total entries to write, the compaction entry included. */
  readonly entries: number;
  /**
   * Adds one compaction entry this many entries before the end, keeping about `keepRecentTokens`
   * of whole exchanges before it (as a real compaction would), so the active window stays small.
   */
  readonly compaction?: { readonly entriesAfter: number; readonly keepRecentTokens: number };
  /** Token estimate of one message (the worker's estimator, so cached estimates are realistic). */
  readonly estimate: (message: AgentMessage) => number;
  /** Extra characters of order history in each tool result (a bigger window from the same number of entries). */
  readonly resultPadChars?: number;
}

/** What was written, for the report. */
export interface SeedReport {
  readonly entries: number;
  readonly tokens: number;
  /** Entries a turn reads: from firstKeptEntryId on (all entries without a compaction). */
  readonly activeEntries: number;
  readonly activeTokens: number;
  readonly seedMs: number;
}

/**
 * One small, realistic exchange of four entries: a user request, a tool call, its short result and
 * the assistant's answer. Numbers vary so entries are not byte-identical.
 */
function exchange(t: number, padChars = 0): AgentMessage[] {
  const order = 10_000 + ((t * 7919) % 90_000);
  const history = padChars > 0 ? `,"history":"${historyText(t, padChars)}"` : '';
  return [
    { role: 'user', content: `Can you check the status of order #${order} and tell me when it ships?`, timestamp: t },
    {
      role: 'assistant',
      content: [{ type: 'toolCall', id: `call_${t}`, name: 'lookup_order', arguments: { orderId: String(order) } }],
      stopReason: 'toolUse',
      usage: { input: 1200 + (t % 300), output: 24 },
    },
    {
      role: 'toolResult',
      toolCallId: `call_${t}`,
      toolName: 'lookup_order',
      content: [
        {
          type: 'text',
          text: `{"orderId":"${order}","status":"packed","carrier":"DHL","eta":"2025-0${1 + (t % 9)}-1${t % 10}"${history}}`,
        },
      ],
    },
    {
      role: 'assistant',
      content: [
        {
          type: 'text',
          text: `Order #${order} is packed and ships with DHL; expected delivery is in ${2 + (t % 5)} days.`,
        },
      ],
      stopReason: 'stop',
      usage: { input: 1300 + (t % 300), output: 31 },
    },
  ];
}

/** Writes a realistic transcript of `opts.entries` entries into an existing session, in batches. */
export async function seedTranscript(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  opts: SeedOptions,
): Promise<SeedReport> {
  const began = performance.now();
  const total = opts.entries;
  const compactionAt = opts.compaction ? total - opts.compaction.entriesAfter - 1 : -1;
  const baseTime = Date.now() - total * 1_000;
  const rows: EntryToAppend[] = [];
  let messages: AgentMessage[] = [];
  let t = 0;
  let parentId: string | null = null;
  let tokens = 0;
  for (let i = 0; i < total; i++) {
    const id = `seed-${i}`;
    const timestamp = new Date(baseTime + i * 1_000).toISOString();
    let entry: TranscriptEntry;
    let tokenEstimate: number | null;
    if (i === compactionAt) {
      entry = compactionEntry(rows, id, parentId, timestamp, opts.compaction!.keepRecentTokens);
      tokenEstimate = null;
    } else {
      if (messages.length === 0) messages = exchange(t++, opts.resultPadChars);
      const message = messages.shift()!;
      entry = { type: 'message', id, parentId, timestamp, message } satisfies MessageEntry;
      tokenEstimate = opts.estimate(message);
      tokens += tokenEstimate;
    }
    rows.push({ entry, tokenEstimate });
    parentId = id;
  }
  for (let i = 0; i < rows.length; i += SEED_BATCH_ROWS) {
    await appendEntries(db, agentId, sessionId, rows.slice(i, i + SEED_BATCH_ROWS));
  }
  const firstKept =
    compactionAt >= 0
      ? rows.findIndex((r) => r.entry.id === (rows[compactionAt]!.entry as CompactionEntry).firstKeptEntryId)
      : 0;
  const active = rows.slice(firstKept).filter((r) => r.entry.type !== 'compaction');
  return {
    entries: rows.length,
    tokens,
    activeEntries: active.length,
    activeTokens: active.reduce((s, r) => s + (r.tokenEstimate ?? 0), 0),
    seedMs: Math.round(performance.now() - began),
  };
}

/**
 * A compaction entry over everything written so far, keeping the newest whole exchanges (starting at
 * a user message, so no tool result loses its call) worth about `keepRecentTokens`.
 */
function compactionEntry(
  written: readonly EntryToAppend[],
  id: string,
  parentId: string | null,
  timestamp: string,
  keepRecentTokens: number,
): CompactionEntry {
  let kept = 0;
  let firstKept = written.length - 1;
  for (let i = written.length - 1; i >= 0 && kept < keepRecentTokens; i--) {
    kept += written[i]!.tokenEstimate ?? 0;
    firstKept = i;
  }
  while (firstKept > 0 && !isUserMessage(written[firstKept]!.entry)) firstKept--;
  const tokensBefore = written.slice(0, firstKept).reduce((s, r) => s + (r.tokenEstimate ?? 0), 0);
  return {
    type: 'compaction',
    id,
    parentId,
    timestamp,
    summary:
      '## Goal\nAnswer customers about their orders.\n## Progress\nLooked up every order the user asked about; all are packed and ship with DHL.\n' +
      '## Open tasks\nNone.\n## Last request\nStatus of the most recent order.',
    firstKeptEntryId: written[firstKept]!.entry.id,
    tokensBefore,
  };
}

/** Varied scan events of an order, about `chars` long (varied so no two results are alike). */
function historyText(t: number, chars: number): string {
  const events: string[] = [];
  for (let k = 0, n = 0; n < chars; k++) {
    const e = `scan ${k} at hub ${(t * 31 + k * 17) % 97} on day ${1 + ((t + k) % 28)}`;
    events.push(e);
    n += e.length + 2;
  }
  return events.join('; ');
}

function isUserMessage(entry: TranscriptEntry): boolean {
  return entry.type === 'message' && entry.message.role === 'user';
}
