import { cancelledTurnsIn, type CancelledTurn } from '../context/cancelled-turns';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Database } from './schema';
import { decodeEntryRow, decodeEntryRowOf, decodeEntryRows, type EntryRow, type EntryRowOf } from './entry-row';
import { redactSecrets, type Redaction } from '../security/redact';
import type { CompactionEntry, TranscriptEntry } from '../context/types';
import { storableJson } from '../text/storable-text';
import { atRestOf, type AtRest } from '../security/at-rest';
import { sealedRow } from '../security/sealed-rows';
import { searchColumnsOf, searchValues } from './entry-search-text';
import { compiledOnce } from './compiled-once';

/** Reads and writes of `transcript_entries`. Every call is scoped by agentId + sessionId. */

export interface EntryToAppend {
  entry: TranscriptEntry;
  /** Cached token estimate (null when not a model-visible message). */
  tokenEstimate: number | null;
  /**
   * The entry's JSON text when the caller has it and has checked it: storable as is and free of
   * secret-shaped text (`jsonTextMayHoldSecret`). An import's unchanged line: written without
   * redaction's walk or a second `JSON.stringify`.
   */
  checkedJson?: string;
}

/** How rows are written. */
export interface AppendOptions {
  /**
   * Leave the rows' search columns empty; `indexDeferredEntries` fills them before the session is
   * searched. For bulk imports: indexing (PostgreSQL's text parser) is most of an import's database
   * time. Ignored when rows are sealed (their blind index is computed here, as always).
   */
  deferSearchIndex?: boolean;
}

/**
 * Appends entries in order. Ids are deterministic (generated in workflow code), so a retried or
 * resumed append inserts nothing twice: `ON CONFLICT DO NOTHING`. Every entry is made storable first
 * (NUL and lone surrogates become U+FFFD, see `storableJson`): this is the one write path of user
 * messages, replies, tool arguments and results, and imports.
 * @returns how many rows were new.
 */
export async function appendEntries(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  entries: readonly EntryToAppend[],
  options: AppendOptions = {},
): Promise<number> {
  if (entries.length === 0) return 0;
  // One entry (a user message, a tool result): the statement compiled once.
  if (entries.length === 1 && options.deferSearchIndex !== true)
    return (await appendOne(db, entryValues(db, agentId, sessionId, entries[0]!))).length;
  return (await appendEntriesNotingPrior(db, agentId, sessionId, entries, options)).inserted;
}

/** What {@link appendEntriesNotingPrior} wrote, and whether the session had rows before it. */
export interface NotedAppendResult {
  /** Rows that were new. */
  inserted: number;
  /** Whether the session had any row before this statement. */
  hadEntries: boolean;
}

/**
 * A batch of entries in one statement of fixed shape with three parameters: the rows travel as one
 * JSON array, each row an array whose payload is the entry's JSON text as it is, and the database
 * unpacks it in order (the rows' seq follows). Built as VALUES, a 500-row batch was 6,000
 * parameters for kysely to build and compile and for the driver to encode, every time. `prior`
 * reads the same snapshot as the insert (one statement), so never the rows being inserted.
 */
const APPEND_BATCH_SQL = `with prior as (
  select exists (select 1 from transcript_entries where agent_id = $1::text and session_id = $2::text) as had
), inserted as (
  insert into transcript_entries (agent_id, session_id, id, parent_id, type, role, payload, token_estimate, byte_size, created_at, search_vector, search_terms)
  select $1::text, $2::text, r.value->>0, r.value->>1, r.value->>2, r.value->>3, r.value->4, (r.value->>5)::int, (r.value->>6)::int,
    (r.value->>7)::timestamptz, to_tsvector('simple', r.value->>8),
    case when jsonb_typeof(r.value->9) = 'array' then array(select jsonb_array_elements_text(r.value->9)) end
  from jsonb_array_elements($3::jsonb) with ordinality as r
  order by r.ordinality
  on conflict (agent_id, session_id, id) do nothing
  returning 1
)
select (select count(*) from inserted)::int as inserted, (select had from prior) as had`;

/**
 * Appends a batch (as `appendEntries`, in the statement above) and says whether the session had rows
 * before it, in the same statement: an import's first batch, one round trip fewer per file.
 */
export async function appendEntriesNotingPrior(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  entries: readonly EntryToAppend[],
  options: AppendOptions = {},
): Promise<NotedAppendResult> {
  const atRest = atRestOf(db);
  // Indexed at insert time for history_search (from the plain entry, so sealed rows index too),
  // unless an import defers it (never for sealed rows: their blind index is computed here).
  const deferIndex = options.deferSearchIndex === true && !atRest.seals;
  const rows = entries.map((item) => {
    const { columns: c, entry } = entryColumns(atRest, agentId, sessionId, item);
    const search = deferIndex ? undefined : searchValues(atRest, entry);
    const text = search && 'searchText' in search ? JSON.stringify(search.searchText) : 'null';
    const terms = search && 'searchTerms' in search ? JSON.stringify(search.searchTerms) : 'null';
    // The payload is JSON text already (the line as read, the entry stringified, or its seal).
    // `?? null`: a missing value is JSON null (the column's NULL), never the text "undefined".
    return `[${JSON.stringify(c.id)},${JSON.stringify(c.parent_id ?? null)},${JSON.stringify(c.type)},${JSON.stringify(c.role ?? null)},${c.payload},${JSON.stringify(c.token_estimate ?? null)},${c.byte_size},${JSON.stringify(c.created_at ?? null)},${text},${terms}]`;
  });
  const result = await db.executeQuery<{ inserted: number; had: boolean }>(
    CompiledQuery.raw(APPEND_BATCH_SQL, [agentId, sessionId, `[${rows.join(',')}]`]),
  );
  const row = result.rows[0]!;
  return { inserted: row.inserted, hadEntries: row.had };
}

/** One entry's row as statement values: its columns, and what history_search indexes it by. */
export function entryValues(db: Kysely<Database>, agentId: string, sessionId: string, item: EntryToAppend) {
  const atRest = atRestOf(db);
  const { columns, entry } = entryColumns(atRest, agentId, sessionId, item);
  return { ...columns, ...searchValues(atRest, entry) };
}

export type EntryValues = ReturnType<typeof entryValues>;

/** The row a compiled-once insert writes from `EntryValues` (a tsvector of plain text, or a sealed entry's terms). */
export function entryInsertRow(v: EntryValues) {
  return {
    agent_id: v.agent_id,
    session_id: v.session_id,
    id: v.id,
    parent_id: v.parent_id,
    type: v.type,
    role: v.role,
    payload: v.payload,
    token_estimate: v.token_estimate,
    byte_size: v.byte_size,
    created_at: v.created_at,
    ...searchColumnsOf(v),
  };
}

/** One entry, inserted unless its id is there; returns the new row's id (none when it was there). */
const appendOne = compiledOnce('append one entry', (db, v: EntryValues) =>
  db
    .insertInto('transcript_entries')
    .values(entryInsertRow(v))
    .onConflict((oc) => oc.columns(['agent_id', 'session_id', 'id']).doNothing())
    .returning('id'),
);

/** An entry's row but its search columns, and the storable entry they are made from. */
function entryColumns(atRest: AtRest, agentId: string, sessionId: string, item: EntryToAppend) {
  const entry = item.checkedJson === undefined ? storableJson(item.entry) : item.entry;
  const plain = item.checkedJson ?? JSON.stringify(entry);
  const columns = {
    agent_id: agentId,
    session_id: sessionId,
    id: entry.id,
    parent_id: 'parentId' in entry ? (entry.parentId as string | null) : null,
    type: entry.type,
    role: entry.type === 'message' ? entry.message.role : null,
    // Sealed when encryption at rest is on; the size stays the plaintext's (preflight compaction sums it).
    payload: atRest.seals ? atRest.json(entry, sealedRow.entryPayload(agentId, sessionId, entry.id)) : plain,
    token_estimate: item.tokenEstimate,
    byte_size: Buffer.byteLength(plain),
    created_at: entry.timestamp,
  };
  return { columns, entry };
}

/** The newest compaction entry of a session, found by a partial-index probe. */
export async function lastCompaction(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
): Promise<EntryRowOf<'compaction'> | undefined> {
  const row = await db
    .selectFrom('transcript_entries')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('type', '=', 'compaction')
    .where('off_branch', '=', false)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row && decodeEntryRowOf('compaction', row);
}

/** The active window: what the model may see now. */
export interface ActiveEntries {
  /** The last compaction, when there was one: its summary stands in for everything before firstKeptEntryId. */
  compaction?: CompactionEntry;
  /** Entries from firstKeptEntryId on (or all), oldest first, excluding compaction entries. */
  rows: EntryRow[];
  /** The messages the last compaction summarized (named in the summary's wrapper for history_expand). */
  summarized?: SummarizedRange;
  /** seq of the newest compaction entry, summary or not (a revert to no summary too): a new one moves the window. */
  lastCompactionSeq?: number;
}

/**
 * The entries from seq `from` to `to` (inclusive; to the end when `to` is absent), oldest first,
 * without compaction entries: one index range read.
 */
export async function entriesInSeqRange(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  range: { readonly from: number; readonly to?: number },
): Promise<EntryRow[]> {
  let query = sessionEntries(db, agentId, sessionId).selectAll().where('seq', '>=', range.from);
  if (range.to !== undefined) query = query.where('seq', '<=', range.to);
  const rows = await query
    .where('type', '!=', 'compaction')
    .where('off_branch', '=', false)
    .orderBy('seq', 'asc')
    .execute();
  return decodeEntryRows(rows);
}

/** Rows per statement when marking entries off the active branch. */
const OFF_BRANCH_BATCH = 1_000;

/** Marks entries as on a branch their transcript left: kept and searchable, never in a model's context. */
export async function markOffBranch(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  ids: readonly string[],
): Promise<void> {
  for (let i = 0; i < ids.length; i += OFF_BRANCH_BATCH)
    await db
      .updateTable('transcript_entries')
      .set({ off_branch: true })
      .where('agent_id', '=', agentId)
      .where('session_id', '=', sessionId)
      .where('id', 'in', ids.slice(i, i + OFF_BRANCH_BATCH))
      .execute();
}

/** The cancelled-turn markers of a session from seq `from` on (a turn's marker always follows its entries). */
export async function cancelledTurnsFrom(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  from: number,
): Promise<CancelledTurn[]> {
  const rows = await sessionEntries(db, agentId, sessionId)
    .selectAll()
    .where('seq', '>=', from)
    .where('type', '=', 'custom')
    .orderBy('seq', 'asc')
    .execute();
  return cancelledTurnsIn(decodeEntryRows(rows).map((r) => ({ id: r.id, entry: r.payload })));
}

/** One session's rows of `transcript_entries`, to read from (the table's index leads with agent and session). */
function sessionEntries(db: Kysely<Database>, agentId: string, sessionId: string) {
  return db.selectFrom('transcript_entries').where('agent_id', '=', agentId).where('session_id', '=', sessionId);
}

/** The message entries one compaction summarized: between the previous compaction's first kept entry and its own. */
export interface SummarizedRange {
  readonly firstEntryId: string;
  readonly lastEntryId: string;
  readonly messages: number;
}

/** Entry kinds that reach the model (the ones a compaction summarizes and history_expand shows). */
export const MESSAGE_TYPES = ['message', 'custom_message'] as const;

/**
 * Loads the entries since the last compaction's `firstKeptEntryId`. Bounded by the active window,
 * never the whole transcript of a long session (two index range reads).
 */
export async function loadActiveEntries(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
): Promise<ActiveEntries> {
  const { compaction, compactionRow, fromSeq } = await activeWindowStart(db, agentId, sessionId);
  const rows = await entriesInSeqRange(db, agentId, sessionId, { from: fromSeq });
  if (!compaction || !compactionRow) return { rows };
  const lastCompactionSeq = Number(compactionRow.seq);
  if (restoresNoSummary(compaction)) return { rows, lastCompactionSeq };
  // The window start is the compaction's own first kept seq: its range needs only the previous compaction.
  // A revert or an applied rerun stands for an earlier compaction's range (`rangeOf`): that one's is named.
  const rangeRow = compaction.rangeOf ? await getEntry(db, agentId, sessionId, compaction.rangeOf) : compactionRow;
  if (rangeRow?.type !== 'compaction') return { compaction, rows, lastCompactionSeq };
  const toSeq = rangeRow === compactionRow ? fromSeq : await firstKeptSeq(db, agentId, sessionId, rangeRow);
  const summarized = await summarizedRange(
    db,
    agentId,
    sessionId,
    await compactionSeqRange(db, agentId, sessionId, rangeRow, toSeq),
  );
  return { compaction, rows, lastCompactionSeq, ...(summarized ? { summarized } : {}) };
}

/** The message entries a (non-revert) compaction entry summarized, or undefined when there were none. */
export async function summarizedRangeOf(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  row: EntryRowOf<'compaction'>,
): Promise<SummarizedRange | undefined> {
  const toSeq = await firstKeptSeq(db, agentId, sessionId, row);
  return summarizedRange(db, agentId, sessionId, await compactionSeqRange(db, agentId, sessionId, row, toSeq));
}

/** The newest compaction entry written before `row` (the one whose window was active when `row` was written). */
export async function compactionBefore(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  row: EntryRow,
): Promise<EntryRowOf<'compaction'> | undefined> {
  const before = await db
    .selectFrom('transcript_entries')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('type', '=', 'compaction')
    .where('seq', '<', row.seq)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return before && decodeEntryRowOf('compaction', before);
}

/**
 * A revert of a session's first compaction: the entry restores no summary, and the window is the
 * whole transcript again (its `firstKeptEntryId` is the session's first entry).
 */
export function restoresNoSummary(entry: Pick<CompactionEntry, 'revertOf' | 'rangeOf'>): boolean {
  return entry.revertOf !== undefined && entry.rangeOf === undefined;
}

/**
 * The seq range `[fromSeq, toSeq)` a compaction (`row`, whose first kept entry is at `toSeq`)
 * summarized: from the previous compaction's first kept entry (or the start) to its own.
 */
async function compactionSeqRange(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  row: EntryRowOf<'compaction'>,
  toSeq: number,
): Promise<{ fromSeq: number; toSeq: number }> {
  const previous = await compactionBefore(db, agentId, sessionId, row);
  const fromSeq = previous ? await firstKeptSeq(db, agentId, sessionId, previous) : 0;
  return { fromSeq: Math.min(fromSeq, toSeq), toSeq };
}

/**
 * The seq a compaction's window starts at, the active window's rule for rows (`activeWindowStart` in
 * src/context for entries in memory): its first kept entry's, or its own when that entry is not in
 * the session (a hard checkpoint names the compaction itself); the compaction row is never a message.
 */
async function firstKeptSeq(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  compactionRow: EntryRowOf<'compaction'>,
): Promise<number> {
  const kept = await db
    .selectFrom('transcript_entries')
    .select('seq')
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('id', '=', compactionRow.payload.firstKeptEntryId)
    .executeTakeFirst();
  return Number(kept?.seq ?? compactionRow.seq);
}

async function summarizedRange(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  range: { fromSeq: number; toSeq: number },
): Promise<SummarizedRange | undefined> {
  const inRange = () =>
    db
      .selectFrom('transcript_entries')
      .where('agent_id', '=', agentId)
      .where('session_id', '=', sessionId)
      .where('seq', '>=', range.fromSeq)
      .where('seq', '<', range.toSeq)
      .where('type', 'in', MESSAGE_TYPES);
  // One round trip on the model call's path: first, last and count as scalar subqueries.
  const r = await db
    .selectNoFrom([
      inRange().select('id').orderBy('seq', 'asc').limit(1).as('first'),
      inRange().select('id').orderBy('seq', 'desc').limit(1).as('last'),
      inRange()
        .select(sql<number>`count(*)::int`.as('n'))
        .as('n'),
    ])
    .executeTakeFirstOrThrow();
  if (r.first === null || r.last === null) return undefined;
  return { firstEntryId: r.first, lastEntryId: r.last, messages: Number(r.n) };
}

/** Bytes of the active window (for preflight compaction), summed in the database. */
export async function activeTranscriptBytes(db: Kysely<Database>, agentId: string, sessionId: string): Promise<number> {
  const { fromSeq } = await activeWindowStart(db, agentId, sessionId);
  const r = await db
    .selectFrom('transcript_entries')
    .select(sql<number>`coalesce(sum(byte_size), 0)::bigint`.as('bytes'))
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('seq', '>=', fromSeq)
    .where('off_branch', '=', false)
    .executeTakeFirstOrThrow();
  return Number(r.bytes);
}

/** Where the active window starts: the last compaction's first kept entry (`firstKeptSeq`), else seq 0. */
async function activeWindowStart(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
): Promise<{ compaction?: CompactionEntry; compactionRow?: EntryRowOf<'compaction'>; fromSeq: number }> {
  const compactionRow = await lastCompaction(db, agentId, sessionId);
  if (!compactionRow) return { fromSeq: 0 };
  return {
    compaction: compactionRow.payload,
    compactionRow,
    fromSeq: await firstKeptSeq(db, agentId, sessionId, compactionRow),
  };
}

/** The last `n` entries of a session, oldest first. */
export async function tailEntries(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  n: number,
): Promise<EntryRow[]> {
  const rows = await db
    .selectFrom('transcript_entries')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .orderBy('seq', 'desc')
    .limit(n)
    .execute();
  return decodeEntryRows(rows).reverse();
}

/** Entry count of a session. */
export async function countEntries(db: Kysely<Database>, agentId: string, sessionId: string): Promise<number> {
  const r = await db
    .selectFrom('transcript_entries')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return r.n;
}

/** The seq (position in the session) of entry `id`, or undefined when there is none: one index probe. */
export async function entrySeq(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  id: string,
): Promise<number | undefined> {
  const row = await sessionEntries(db, agentId, sessionId).select('seq').where('id', '=', id).executeTakeFirst();
  return row ? Number(row.seq) : undefined;
}

/** Whether session `sessionId` of the agent has any entry at all: one index probe. */
export async function hasEntries(db: Kysely<Database>, agentId: string, sessionId: string): Promise<boolean> {
  const row = await sessionEntries(db, agentId, sessionId).select('id').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** One entry by id, or undefined. */
export async function getEntry(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  id: string,
): Promise<EntryRow | undefined> {
  const row = await sessionEntries(db, agentId, sessionId).selectAll().where('id', '=', id).executeTakeFirst();
  return row && decodeEntryRow(row);
}

/** What {@link appendEntriesRedacted} wrote and what it redacted. */
export interface RedactedAppendResult {
  /** Rows that were new (re-appended ids insert nothing). */
  inserted: number;
  /** Secrets replaced, per kind, summed over the entries. */
  redactions: Redaction[];
}

/**
 * The persistence path for entries that may hold secrets (turns, tool results, imports): redacts
 * secret-shaped values with `redactSecrets`, then `appendEntries`. Redaction is deterministic, so a
 * retried append writes the same payload and stays idempotent.
 */
export async function appendEntriesRedacted(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  entries: readonly EntryToAppend[],
  options: AppendOptions = {},
): Promise<RedactedAppendResult> {
  const { redacted, redactions } = redactEntries(entries);
  const inserted = await appendEntries(db, agentId, sessionId, redacted, options);
  return { inserted, redactions };
}

/** The entries with secret-shaped values redacted (deterministic: a retry writes the same), and what was replaced per kind. */
export function redactEntries(entries: readonly EntryToAppend[]): {
  redacted: EntryToAppend[];
  redactions: Redaction[];
} {
  const byKind = new Map<Redaction['kind'], number>();
  const redacted = entries.map((item) => {
    // Checked by the caller: nothing secret-shaped in its text.
    if (item.checkedJson !== undefined) return item;
    const { value, redactions } = redactSecrets(item.entry);
    for (const r of redactions) byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + r.count);
    return value === item.entry ? item : { ...item, entry: value };
  });
  return { redacted, redactions: [...byKind].map(([kind, count]) => ({ kind, count })) };
}

/**
 * Caches token estimates computed by the load path for entries stored without one (imports leave
 * `token_estimate` null: tokenizing history no turn will load would dominate import time).
 */
export async function setTokenEstimates(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  estimates: ReadonlyArray<{ id: string; tokens: number }>,
): Promise<void> {
  for (const { id, tokens } of estimates) {
    await db
      .updateTable('transcript_entries')
      .set({ token_estimate: tokens })
      .where('agent_id', '=', agentId)
      .where('session_id', '=', sessionId)
      .where('id', '=', id)
      .execute();
  }
}

/**
 * Entries of a session after `afterSeq`, oldest first, at most `limit` (keyset pages for export:
 * each page is one index range read, memory stays bounded).
 */
export async function entriesAfter(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  afterSeq: number,
  limit: number,
): Promise<EntryRow[]> {
  const rows = await db
    .selectFrom('transcript_entries')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('seq', '>', afterSeq)
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute();
  return decodeEntryRows(rows);
}

/** The id of the session's newest compaction entry (the one whose window is active), or null when it has none. */
export async function latestCompactionEntryId(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('transcript_entries')
    .select('id')
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('type', '=', 'compaction')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}
