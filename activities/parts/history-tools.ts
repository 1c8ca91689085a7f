/**
 * The built-in recall tools: `history_search` finds entries of this session key's whole transcript
 * (every compaction epoch and every session id the key had; compaction never deletes raw entries),
 * `history_expand` reads back the entries a compaction summarized, or those around an entry, a page
 * at a time.
 */
import { z } from 'zod';
import type { Kysely } from 'kysely';
import type { ActivityDeps } from '../../src/runtime/deps';
import type { ToolDefinition } from '../../src/tools/registry';
import type { Database } from '../../src/store/schema';
import type { EntryRow } from '../../src/store/entry-row';
import { getEntry } from '../../src/store/entries-repo';
import { compactionSpans, messagesInRange, rangeAround, type CompactionSpan } from '../../src/store/history-repo';
import { answerBeside, searchHistory } from '../../src/store/history-search';
import { sessionIdsOfKey, type KeySessionId } from '../../src/store/session-ids-repo';
import { HISTORY_EXPAND, HISTORY_SEARCH } from '../../src/tools/recall-tools';
import { denseSearchFor } from '../../src/embeddings/recall-runtime';
import { MESSAGE_TYPES } from '../../src/store/entries-repo';
import { entrySearchText } from '../../src/store/entry-search-text';
import { serializeForSummary } from '../../src/compaction/serialize-for-summary';
import { DEFAULTS } from '../../src/config/defaults';
import { fitHits, leftOutNote, type RenderedHit } from '../../src/context/recall-result-budget';
import {
  decodeCursor,
  encodeCursor,
  fillPage,
  snippetAround,
  type ExpandCursor,
} from '../../src/context/history-pages';

const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 50;
/** Tokens of entries one history_expand page returns. */
const PAGE_TOKENS = 4_000;
/** Entries read per page before the budget cuts (a page rarely holds more). */
const PAGE_ROWS = 200;
const DEFAULT_AROUND = 5;

const historySearchInput = z.object({
  query: z.string().trim().min(1, 'give words to search the conversation history for'),
  limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
});

const historyExpandInput = z
  .object({
    compactionId: z.string().min(1).optional(),
    entryId: z.string().min(1).optional(),
    before: z.number().int().min(0).max(MAX_LIMIT).optional(),
    after: z.number().int().min(0).max(MAX_LIMIT).optional(),
    cursor: z.string().min(1).optional(),
  })
  .refine((v) => [v.compactionId, v.entryId, v.cursor].filter((x) => x !== undefined).length === 1, {
    message:
      'give exactly one of compactionId (from a summary), entryId (from history_search) or cursor (from the previous page)',
  });

export function historyTools(
  deps: ActivityDeps,
): [ToolDefinition<typeof historySearchInput>, ToolDefinition<typeof historyExpandInput>] {
  return [historySearchTool(deps), historyExpandTool(deps.db)];
}

function historySearchTool(deps: ActivityDeps): ToolDefinition<typeof historySearchInput> {
  const { db } = deps;
  const dense = denseSearchFor(deps.recall, deps.config);
  return {
    name: HISTORY_SEARCH,
    description:
      'Search the full conversation history of this session, including what compactions summarized away; returns the best matching entries, ' +
      'each with its id and time, and the question it answers or the answer it got beside it. ' +
      `Input: query (words; rarer words and entries with more of them rank higher, word forms match: "went" finds "go"), limit (optional, 1-${MAX_LIMIT}, default ${DEFAULT_LIMIT}). ` +
      'Read more with history_expand.',
    input: historySearchInput,
    async run(input, ctx) {
      const sessions = await sessionIdsOfKey(db, ctx.agentId, ctx.sessionKey);
      const sessionIds = sessions.map((s) => s.sessionId);
      const from = await currentTurnStart(db, ctx.agentId, sessions);
      const hits = await searchHistory(db, {
        agentId: ctx.agentId,
        sessionIds,
        query: input.query,
        limit: input.limit ?? DEFAULT_LIMIT,
        ...(from ? { from } : {}),
        ...(dense ? { dense } : {}),
      });
      if (hits.length === 0) return `No earlier history entries match "${input.query}".`;
      const spans = new Map<string, CompactionSpan[]>();
      const words = input.query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
      const rendered: RenderedHit[] = [];
      for (const hit of hits) {
        const { row } = hit;
        if (!spans.has(row.session_id))
          spans.set(row.session_id, await compactionSpans(db, ctx.agentId, row.session_id));
        const covering = spans
          .get(row.session_id)!
          .find((s) => Number(row.seq) >= s.fromSeq && Number(row.seq) < s.toSeq);
        const where = covering ? ` · summarized by compaction ${covering.id}` : '';
        const alone = `- entry ${row.id} · session ${row.session_id} · ${stamp(row)} · ${row.role ?? row.type}${where}\n  ${snippetAround(textOf(row), words)}`;
        const beside = answerBeside(hit);
        rendered.push(
          beside
            ? {
                full: `${alone}\n  ${beside.label} (entry ${beside.row.id} · ${stamp(beside.row)} · ${beside.row.role ?? beside.row.type}): ${snippetAround(textOf(beside.row), words)}`,
                alone,
              }
            : { full: alone },
        );
      }
      const budget = DEFAULTS.recallResultTokens;
      const { texts, leftOut } = fitHits(rendered, budget);
      return `${texts.length} matching entries, best first (history_expand with an entryId shows the entries around one):\n${texts.join('\n')}${leftOutNote(leftOut, budget, HISTORY_SEARCH)}`;
    },
  };
}

/**
 * Where the current turn began: its user message in the session's current id. The turn's own
 * entries are left out of a search, since the model has them already.
 */
async function currentTurnStart(
  db: Kysely<Database>,
  agentId: string,
  sessions: readonly KeySessionId[],
): Promise<{ sessionId: string; seq: number } | undefined> {
  const current = sessions.find((s) => s.current);
  if (!current) return undefined;
  const row = await db
    .selectFrom('transcript_entries')
    .select('seq')
    .where('agent_id', '=', agentId)
    .where('session_id', '=', current.sessionId)
    .where('type', 'in', MESSAGE_TYPES)
    .where('role', '=', 'user')
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { sessionId: current.sessionId, seq: Number(row.seq) } : undefined;
}

function textOf(row: EntryRow): string {
  return entrySearchText(row.payload);
}

function historyExpandTool(db: Kysely<Database>): ToolDefinition<typeof historyExpandInput> {
  return {
    name: HISTORY_EXPAND,
    description:
      `Read back earlier conversation entries, about ${PAGE_TOKENS} tokens a page: the entries a compaction summarized (compactionId, named in the summary), ` +
      `or those around an entry (entryId from history_search, with before/after entry counts, default ${DEFAULT_AROUND}). Pass the returned cursor for the next page.`,
    input: historyExpandInput,
    async run(input, ctx) {
      const sessionIds = await keySessionIds(db, ctx.agentId, ctx.sessionKey);
      const range = await resolveRange(db, ctx.agentId, sessionIds, input);
      if (typeof range === 'string') return { content: [{ type: 'text', text: range }], isError: true };
      const rows = await messagesInRange(db, { agentId: ctx.agentId, ...range, limit: PAGE_ROWS });
      if (rows.length === 0) return 'No entries in that range.';
      const { texts, taken } = fillPage(rows.map(renderEntry), PAGE_TOKENS);
      const next =
        taken < rows.length
          ? Number(rows[taken]!.seq)
          : rows.length === PAGE_ROWS
            ? Number(rows[rows.length - 1]!.seq) + 1
            : undefined;
      const more =
        next !== undefined && next < range.toSeq
          ? `\n\n[more: history_expand with cursor ${encodeCursor({ ...range, fromSeq: next })}]`
          : '\n\n[end of range]';
      return `${texts.join('\n\n')}${more}`;
    },
  };
}

/** Every session id of this agent's key, the current one and those rotated away (recall reaches all of them). */
async function keySessionIds(db: Kysely<Database>, agentId: string, sessionKey: string): Promise<string[]> {
  return (await sessionIdsOfKey(db, agentId, sessionKey)).map((s) => s.sessionId);
}

/** The session and seq range an expansion reads, or an error text naming what was not found. */
async function resolveRange(
  db: Kysely<Database>,
  agentId: string,
  sessionIds: readonly string[],
  input: z.infer<typeof historyExpandInput>,
): Promise<ExpandCursor | string> {
  if (input.cursor !== undefined) {
    const cursor = decodeCursor(input.cursor);
    if (!cursor || !sessionIds.includes(cursor.sessionId))
      return 'cursor: not a cursor of this session; pass the cursor text a previous history_expand page returned';
    return cursor;
  }
  const id = (input.compactionId ?? input.entryId)!;
  for (const sessionId of sessionIds) {
    const row = await getEntry(db, agentId, sessionId, id);
    if (!row) continue;
    if (input.compactionId !== undefined) {
      const span = (await compactionSpans(db, agentId, sessionId)).find((s) => s.id === id);
      if (span) return { sessionId, fromSeq: span.fromSeq, toSeq: span.toSeq };
      continue;
    }
    const seq = Number(row.seq);
    const around = await rangeAround(db, {
      agentId,
      sessionId,
      seq,
      before: input.before ?? DEFAULT_AROUND,
      after: input.after ?? DEFAULT_AROUND,
    });
    return { sessionId, ...around };
  }
  return input.compactionId !== undefined
    ? `compactionId: no compaction ${id} in this session; use the id a summary names`
    : `entryId: no entry ${id} in this session; use an entry id history_search returned`;
}

/** One entry as an expansion shows it: its id and time, then the message as the summarizer renders it. */
function renderEntry(row: EntryRow): string {
  const entry = row.payload;
  const body =
    entry.type === 'message'
      ? serializeForSummary([entry.message])
      : entry.type === 'custom_message'
        ? `[Note]: ${entrySearchText(entry)}`
        : '';
  return `(entry ${row.id} · ${stamp(row)})\n${body}`;
}

function stamp(row: EntryRow): string {
  return new Date(row.created_at).toISOString();
}
