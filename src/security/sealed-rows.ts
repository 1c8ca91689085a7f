import type { RowBinding } from './sealed-value';

/**
 * The rows values sealed at rest are bound to, one function per sealed column: the columns that
 * identify the row (its primary or unique key) and their values. A reader of the column selects
 * these with it, so the at-rest plugin can check that the value was sealed for the row it sits in.
 */
export const sealedRow = {
  /** `transcript_entries.payload`. */
  entryPayload: (agentId: string, sessionId: string, id: string): RowBinding => ({
    table: 'transcript_entries',
    column: 'payload',
    key: { agent_id: agentId, session_id: sessionId, id },
  }),
  /** `memory_notes.text`. */
  noteText: (agentId: string, id: string): RowBinding => ({
    table: 'memory_notes',
    column: 'text',
    key: { agent_id: agentId, id },
  }),
  /** `memory_checkpoints.checkpoint`. */
  checkpoint: (agentId: string, sessionKey: string, flushId: string): RowBinding => ({
    table: 'memory_checkpoints',
    column: 'checkpoint',
    key: { agent_id: agentId, session_key: sessionKey, flush_id: flushId },
  }),
  /** `pending_tool_args.arguments`. */
  toolArguments: (agentId: string, sessionId: string, assistantEntryId: string, toolCallId: string): RowBinding => ({
    table: 'pending_tool_args',
    column: 'arguments',
    key: { agent_id: agentId, session_id: sessionId, assistant_entry_id: assistantEntryId, tool_call_id: toolCallId },
  }),
  /** `subagent_runs.task` and `subagent_runs.result`. */
  subagentRun: (column: 'task' | 'result', agentId: string, id: string): RowBinding => ({
    table: 'subagent_runs',
    column,
    key: { agent_id: agentId, id },
  }),
  /** `tool_approvals.arguments` (a waiting call's arguments, redacted). */
  approvalArguments: (id: string): RowBinding => ({
    table: 'tool_approvals',
    column: 'arguments',
    key: { id },
  }),
  /** `compactions.summary` (a rerun's summary kept on its row). */
  compactionSummary: (agentId: string, id: string): RowBinding => ({
    table: 'compactions',
    column: 'summary',
    key: { agent_id: agentId, id },
  }),
} as const;
