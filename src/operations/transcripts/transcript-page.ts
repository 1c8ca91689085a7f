/**
 * One page of a session's transcript for the console: each entry shortened to what a reader scans
 * (the text, tool calls by name with their arguments folded, a compaction's summary), oldest first.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import type { AgentMessage, TranscriptEntry } from '../../context/types';
import { TOOL_CALL_BLOCK_TYPES } from '../../context/types';

import type { ConsoleEntry, TranscriptPage } from './transcript-views';

const TOOL_CALL_TYPES: ReadonlySet<string> = new Set(TOOL_CALL_BLOCK_TYPES);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b): b is { type: 'text'; text: string } => (b as { type?: string }).type === 'text')
    .map((b) => b.text)
    .join('\n');
}

function toolCallsOf(message: AgentMessage): ConsoleEntry['toolCalls'] {
  if (message.role !== 'assistant') return [];
  return message.content
    .filter((b) => TOOL_CALL_TYPES.has(b.type))
    .map((b) => {
      const call = b as { name: string; arguments?: unknown; input?: unknown };
      return {
        name: call.name,
        arguments: JSON.stringify(call.arguments ?? call.input ?? {}),
      };
    });
}

function consoleEntry(row: {
  id: string;
  seq: number | string;
  type: string;
  role: string | null;
  created_at: Date | string;
  token_estimate: number | null;
  payload: unknown;
}): ConsoleEntry {
  const entry = row.payload as TranscriptEntry;
  const base = {
    id: row.id,
    seq: Number(row.seq),
    type: row.type,
    role: row.role,
    createdAt: new Date(row.created_at).toISOString(),
    tokens: row.token_estimate,
  };
  if (entry.type === 'message') {
    const m = entry.message;
    return {
      ...base,
      text: textOf(m.content),
      toolCalls: toolCallsOf(m),
      ...(m.role === 'toolResult' ? { toolName: m.toolName } : {}),
    };
  }
  if (entry.type === 'compaction' || entry.type === 'branch_summary')
    return { ...base, text: entry.summary, toolCalls: [] };
  if (entry.type === 'custom_message') return { ...base, text: textOf(entry.content), toolCalls: [] };
  return { ...base, text: '', toolCalls: [] };
}

/** Page `page` (from 1) of the session's entries, `pageSize` per page, oldest first. */
export async function transcriptPage(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  page: number,
  pageSize: number,
): Promise<TranscriptPage> {
  const where = db.selectFrom('transcript_entries').where('agent_id', '=', agentId).where('session_id', '=', sessionId);
  const [{ n }] = (await where.select(sql<number>`count(*)::int`.as('n')).execute()) as [{ n: number }];
  const rows = await where
    .select(['id', 'seq', 'type', 'role', 'created_at', 'token_estimate', 'payload', 'agent_id', 'session_id'])
    .orderBy('seq', 'asc')
    .limit(pageSize)
    .offset((page - 1) * pageSize)
    .execute();
  return { entries: rows.map(consoleEntry), total: Number(n), page, pageSize };
}
