import { sql, type Kysely } from 'kysely';
import type { Database } from './schema';
import { decodeEntryRows } from './entry-row';
import { loadActiveEntries, MESSAGE_TYPES, type SummarizedRange } from './entries-repo';
import type { CompactionEntry, TranscriptEntry } from '../context/types';
import { IncrementalPipeline } from '../context/incremental-pipeline';
import { compiledOnce } from './compiled-once';

/**
 * A worker's copy of each session's active window (issue 20: work proportional to what changed).
 * A turn reads only the entries appended since the copy was made, in one query that also checks the
 * copy is still the database's window; anything else (a compaction, a revert, an entry kind that is
 * not a message, a deleted or late-committed row, another worker's writes it cannot account for)
 * drops the copy and rebuilds it from the database with `loadActiveEntries`, as without a cache.
 */

/** One entry of the window as the context path uses it. */
export interface WindowEntry {
  readonly id: string;
  readonly seq: number;
  readonly entry: TranscriptEntry;
  /** Stored estimate; the context path fills it in (and stores it) when the row had none. */
  tokenEstimate: number | null;
}

/** A session's active window, oldest entry first. */
export interface ActiveWindow {
  readonly compaction?: CompactionEntry;
  readonly summarized?: SummarizedRange;
  readonly entries: readonly WindowEntry[];
  /** The context pipeline of this copy of the window: it runs only what was appended since its last clean run. */
  readonly pipeline: IncrementalPipeline;
}

/** How a load was served (for the model_call log line and the tests). */
export type WindowLoad = 'hit' | 'miss' | 'stale';

interface Cached {
  readonly window: {
    compaction?: CompactionEntry;
    summarized?: SummarizedRange;
    entries: WindowEntry[];
    pipeline: IncrementalPipeline;
  };
  /** seq of the last compaction entry (null: none): a new one moves the window. */
  readonly compactionSeq: number | null;
  /** First seq of the window (the last compaction's first kept entry, or 0). */
  readonly fromSeq: number;
  lastSeq: number;
  bytes: number;
}

/** Entry kinds a cached window takes in place; any other new entry rebuilds the window from the database. */
const APPLIED_IN_PLACE = new Set<string>(MESSAGE_TYPES);
/** Bookkeeping per entry besides its JSON (objects, ids, the map slot), for the memory bound. */
const ENTRY_OVERHEAD_BYTES = 200;

/** Active windows by session, least recently used evicted first once their estimated size passes `maxBytes`. */
export class ActiveWindowCache {
  private readonly sessions = new Map<string, Cached>();
  private totalBytes = 0;

  /**
   * @param maxBytes estimated memory the windows may take: JSON size × 3 (× 2 for the UTF-16 strings,
   * × 1 for the UTF-8 JSON the model clients keep per sent message, json-request-body.ts) plus
   * per-entry overhead; 0 caches nothing.
   */
  constructor(readonly maxBytes: number) {}

  /** Estimated bytes held. */
  get bytes(): number {
    return this.totalBytes;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The window of a session: the cached copy plus what was appended since, or a rebuild from the database. */
  async load(
    db: Kysely<Database>,
    agentId: string,
    sessionId: string,
  ): Promise<{ window: ActiveWindow; load: WindowLoad }> {
    const key = `${agentId}\u0000${sessionId}`;
    const cached = this.sessions.get(key);
    if (cached) {
      this.sessions.delete(key); // re-inserted below: most recently used last
      this.totalBytes -= cached.bytes;
      if (await applyAppended(db, agentId, sessionId, cached)) {
        this.remember(key, cached);
        return { window: cached.window, load: 'hit' };
      }
    }
    const rebuilt = await rebuild(db, agentId, sessionId);
    this.remember(key, rebuilt);
    return { window: rebuilt.window, load: cached ? 'stale' : 'miss' };
  }

  private forgetKey(key: string): void {
    const cached = this.sessions.get(key);
    if (!cached) return;
    this.totalBytes -= cached.bytes;
    this.sessions.delete(key);
  }

  private remember(key: string, entry: Cached): void {
    // A concurrent load of the same session may have stored its own copy meanwhile: this one replaces it.
    this.forgetKey(key);
    if (entry.bytes > this.maxBytes) return;
    this.sessions.set(key, entry);
    this.totalBytes += entry.bytes;
    for (const [oldest, value] of this.sessions) {
      if (this.totalBytes <= this.maxBytes) break;
      this.sessions.delete(oldest);
      this.totalBytes -= value.bytes;
    }
  }
}

/** The window as `loadActiveEntries` reads it (no cache, or a cached copy that no longer holds). */
async function rebuild(db: Kysely<Database>, agentId: string, sessionId: string): Promise<Cached> {
  const active = await loadActiveEntries(db, agentId, sessionId);
  const entries = active.rows.map((r) => ({
    id: r.id,
    seq: Number(r.seq),
    entry: r.payload,
    tokenEstimate: r.token_estimate,
  }));
  const first = active.rows[0];
  const last = active.rows[active.rows.length - 1];
  // The newest compaction entry's seq, also for a revert that restored no summary (the probe compares it).
  const compactionSeq = active.lastCompactionSeq ?? null;
  return {
    window: {
      ...(active.compaction ? { compaction: active.compaction } : {}),
      ...(active.summarized ? { summarized: active.summarized } : {}),
      entries,
      pipeline: new IncrementalPipeline(),
    },
    compactionSeq,
    // An empty window after a compaction starts past it: nothing before can join it.
    fromSeq: first ? Number(first.seq) : (compactionSeq ?? 0),
    lastSeq: Math.max(last ? Number(last.seq) : 0, compactionSeq ?? 0),
    bytes: active.rows.reduce((n, r) => n + entryBytes(r.byte_size), 0),
  };
}

interface ProbeValues {
  agentId: string;
  sessionId: string;
  /** First seq of the cached window. */
  fromSeq: number;
}

/** The probe's two parts: the last compaction's seq, and how many rows the window has now. */
function probe(db: Kysely<Database>, v: ProbeValues) {
  const scoped = (alias: 'c' | 'w' | 'k' | 'b') =>
    db
      .selectFrom(`transcript_entries as ${alias}`)
      .where(`${alias}.agent_id`, '=', v.agentId)
      .where(`${alias}.session_id`, '=', v.sessionId);
  // The window's rows, counted as every row from its first seq less the compaction rows and the rows
  // off the active branch among them: each count reads one index alone (a filter on the window's
  // rows would visit every one of them).
  const allFromFirst = scoped('w')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('w.seq', '>=', v.fromSeq);
  const compactionsFromFirst = scoped('k')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('k.seq', '>=', v.fromSeq)
    .where('k.type', '=', 'compaction');
  const offBranchFromFirst = scoped('b')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('b.seq', '>=', v.fromSeq)
    .where('b.off_branch', '=', true)
    .where('b.type', '<>', 'compaction');
  return [
    scoped('c')
      .select('c.seq')
      .where('c.type', '=', 'compaction')
      .where('c.off_branch', '=', false)
      .orderBy('c.seq', 'desc')
      .limit(1)
      .as('compaction_seq'),
    sql<number>`(${allFromFirst}) - (${compactionsFromFirst}) - (${offBranchFromFirst})`.as('window_count'),
  ] as const;
}

/** The rows after the copy's last seq, each carrying the probe. Compiled once: every turn on a cached window runs it. */
const appendedWithProbe = compiledOnce('window rows after', (db, v: ProbeValues & { lastSeq: number }) =>
  db
    .selectFrom('transcript_entries')
    .select(['id', 'seq', 'type', 'payload', 'token_estimate', 'byte_size'])
    .select(probe(db, v))
    .where('agent_id', '=', v.agentId)
    .where('session_id', '=', v.sessionId)
    .where('seq', '>', v.lastSeq)
    .where('off_branch', '=', false)
    .orderBy('seq', 'asc'),
);

/** The probe when nothing was appended. */
const probeAlone = compiledOnce('window probe', (db, v: ProbeValues) => db.selectNoFrom(probe(db, v)));

/**
 * Reads the entries after the copy's last seq, with the database's last compaction seq and window
 * size in the same statement, and appends them to the copy when the copy still describes the window.
 * False when it does not (the caller rebuilds).
 */
async function applyAppended(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  cached: Cached,
): Promise<boolean> {
  const window = { agentId, sessionId, fromSeq: cached.fromSeq };
  const rows = await appendedWithProbe(db, { ...window, lastSeq: cached.lastSeq });
  // Nothing new: the probe alone tells whether the copy still holds.
  const state = rows[0] ?? (await probeAlone(db, window))[0];
  if (!state) throw new Error('the window probe returned no row');
  const compactionSeq = state.compaction_seq === null ? null : Number(state.compaction_seq);
  if (compactionSeq !== cached.compactionSeq) return false;
  if (rows.some((r) => !APPLIED_IN_PLACE.has(r.type))) return false;
  // A row deleted from the window, or one that committed after a later seq was read, shows as a count that does not add up.
  if (Number(state.window_count) !== cached.window.entries.length + rows.length) return false;
  for (const r of decodeEntryRows(rows)) {
    cached.window.entries.push({ id: r.id, seq: Number(r.seq), entry: r.payload, tokenEstimate: r.token_estimate });
    cached.bytes += entryBytes(r.byte_size);
    cached.lastSeq = Number(r.seq);
  }
  return true;
}

/** An entry's share of the bound: its strings (UTF-16), the request encoding kept for it (UTF-8), and bookkeeping. */
function entryBytes(byteSize: number): number {
  return byteSize * 3 + ENTRY_OVERHEAD_BYTES;
}
