import type { Kysely } from 'kysely';
import type { Database } from './schema';
import { storableJson } from '../text/storable-text';
import { atRestOf } from '../security/at-rest';
import { sealedRow } from '../security/sealed-rows';
import { appendEntriesRedacted, type EntryToAppend, type RedactedAppendResult } from './entries-repo';
import { isToolCallBlock, toolCallArguments, type ToolCallBlock } from '../context/types';

/**
 * The raw arguments of tool calls between the model call that produced them and the stored result
 * (`pending_tool_args`). The transcript holds the calls redacted; a tool runs with what the model
 * sent, and those arguments must outlive a worker crash without entering Temporal history.
 */

interface PendingToolCall {
  readonly toolCallId: string;
  readonly arguments: Record<string, unknown>;
}

/**
 * Appends an assistant entry redacted and, in the same transaction, keeps its tool calls' raw
 * arguments. Only the attempt whose entry is inserted keeps arguments, so the pending arguments
 * always belong to the calls the transcript holds (a retried model call may produce other calls).
 */
export async function appendReplyKeepingToolArgs(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  item: EntryToAppend,
): Promise<RedactedAppendResult> {
  const { entry } = item;
  const calls =
    entry.type === 'message' && entry.message.role === 'assistant'
      ? entry.message.content
          .filter((b): b is ToolCallBlock => isToolCallBlock(b))
          .map((b) => ({ toolCallId: b.id, arguments: toolCallArguments(b) ?? {} }))
      : [];
  if (calls.length === 0) return appendEntriesRedacted(db, agentId, sessionId, [item]);
  return db.transaction().execute(async (trx) => {
    const appended = await appendEntriesRedacted(trx, agentId, sessionId, [item]);
    if (appended.inserted > 0) await savePendingToolArgs(trx, agentId, sessionId, entry.id, calls, entry.timestamp);
    return appended;
  });
}

/**
 * Appends a tool result redacted and forgets the call's raw arguments, in one transaction: a retry
 * either finds the result stored or still finds the arguments.
 */
export async function appendToolResultReleasingArgs(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  call: { readonly assistantEntryId: string; readonly toolCallId: string },
  item: EntryToAppend,
): Promise<RedactedAppendResult> {
  return db.transaction().execute(async (trx) => {
    const appended = await appendEntriesRedacted(trx, agentId, sessionId, [item]);
    await deletePendingToolArgs(trx, agentId, sessionId, call.assistantEntryId, call.toolCallId);
    return appended;
  });
}

/** Keeps the raw arguments of an assistant entry's tool calls. A retried save changes nothing. */
async function savePendingToolArgs(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  assistantEntryId: string,
  calls: readonly PendingToolCall[],
  now: string,
): Promise<void> {
  if (calls.length === 0) return;
  const atRest = atRestOf(db);
  await db
    .insertInto('pending_tool_args')
    .values(
      calls.map((call) => ({
        agent_id: agentId,
        session_id: sessionId,
        assistant_entry_id: assistantEntryId,
        tool_call_id: call.toolCallId,
        // The same storable form the transcript gets (PostgreSQL refuses NUL in jsonb), sealed likewise.
        arguments: atRest.json(
          storableJson(call.arguments),
          sealedRow.toolArguments(agentId, sessionId, assistantEntryId, call.toolCallId),
        ),
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['agent_id', 'session_id', 'assistant_entry_id', 'tool_call_id']).doNothing())
    .execute();
}

/** The raw arguments of one tool call, or undefined once its result was stored (or for calls stored before this table). */
export async function loadPendingToolArgs(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  assistantEntryId: string,
  toolCallId: string,
): Promise<Record<string, unknown> | undefined> {
  const row = await db
    .selectFrom('pending_tool_args')
    // The key columns with the arguments: a value sealed at rest opens only in its own row.
    .select(['agent_id', 'session_id', 'assistant_entry_id', 'tool_call_id', 'arguments'])
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('assistant_entry_id', '=', assistantEntryId)
    .where('tool_call_id', '=', toolCallId)
    .executeTakeFirst();
  return row?.arguments;
}

/** Forgets one call's raw arguments (its result is stored). Deleting twice is harmless. */
async function deletePendingToolArgs(
  db: Kysely<Database>,
  agentId: string,
  sessionId: string,
  assistantEntryId: string,
  toolCallId: string,
): Promise<void> {
  await db
    .deleteFrom('pending_tool_args')
    .where('agent_id', '=', agentId)
    .where('session_id', '=', sessionId)
    .where('assistant_entry_id', '=', assistantEntryId)
    .where('tool_call_id', '=', toolCallId)
    .execute();
}
