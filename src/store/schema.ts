import type { ColumnType, Generated, Insertable, RawBuilder, Selectable } from 'kysely';

/** Timestamps come back as Date from both pg and PGlite; we write Date or ISO strings. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** JSON columns: written as serialized JSON, read back parsed. */
type Json<T> = ColumnType<T, string, string>;

/** One row per (agent_id, session_key): OpenClaw's SessionEntry. */
export interface SessionsTable {
  agent_id: string;
  session_key: string;
  session_id: string;
  session_started_at: Timestamp;
  last_interaction_at: Timestamp;
  updated_at: Timestamp;
  chat_type: string | null;
  channel: string | null;
  label: string | null;
  display_name: string | null;
  delivery: Json<Record<string, unknown>> | null;
  model_override: string | null;
  provider_override: string | null;
  auth_profile_override: string | null;
  toggles: Json<Record<string, unknown>>;
  input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  total_tokens: Generated<number>;
  context_tokens: Generated<number>;
  total_tokens_fresh: Generated<boolean>;
  compaction_count: Generated<number>;
  memory_flush_at: Timestamp | null;
  memory_flush_compaction_count: number | null;
  /** Consecutive failed automatic compactions; auto-compaction stops at `maxConsecutiveCompactionFailures` (docs/reference.md, "Failure model"). */
  compaction_failures: Generated<number>;
  /** Tokens before and after the session's last successful compaction (storm hold, see decideAfterTurn). */
  last_compaction_tokens_before: number | null;
  last_compaction_tokens_after: number | null;
  /** Why the last memory flush failed (cleared by the next successful one). */
  memory_flush_error: string | null;
  memory_flush_failed_at: Timestamp | null;
  /** The session workflow's counters, saved when it closes after a quiet period. */
  workflow_state: Json<Record<string, unknown>> | null;
  /** Prompt tokens the provider read from its prompt cache (`input_tokens` counts only uncached ones). */
  cache_read_tokens: Generated<number>;
  /** Prompt tokens the provider wrote to its prompt cache. */
  cache_write_tokens: Generated<number>;
  /** Some of the counters are Keel's own count: a model server reported no usage for a call. */
  usage_estimated: Generated<boolean>;
  /**
   * Per model: Keel's token estimate over that provider's count of this session's prompts, learned
   * when the provider refused one as too long and the estimate had fallen short (below 1), raised
   * again by later replies' usage. The session's window for a model is the model's times its entry;
   * other sessions of the model, and other models of this session (a summarizer with another
   * tokenizer), keep theirs. Null or no entry: never.
   */
  estimate_scales: Json<Record<string, number>> | null;
  /**
   * What the last finished turn's call sent besides the conversation: its system prompt, workspace
   * (bootstrap) files and tool definitions. Null until a turn of this session id reported them.
   */
  prompt_system_tokens: number | null;
  prompt_workspace_tokens: number | null;
  prompt_tool_tokens: number | null;
}

/** Append-only event stream per session; a tree through parent_id, ordered by seq. */
export interface TranscriptEntriesTable {
  agent_id: string;
  session_id: string;
  id: string;
  parent_id: string | null;
  seq: ColumnType<number, number | bigint | string | undefined, number | bigint | string>;
  type: string;
  role: string | null;
  payload: Json<Record<string, unknown>>;
  token_estimate: number | null;
  byte_size: number;
  created_at: Timestamp;
  /** `to_tsvector('simple', …)` of the entry's text (history_search); null when the row is sealed. */
  search_vector: ColumnType<string | null, RawBuilder<string> | null | undefined, RawBuilder<string> | null>;
  /** Blind-index HMACs of the words of a sealed row's text; null when the row is plain. */
  search_terms: string[] | null;
  /** True for an imported entry on a branch its transcript left: kept and searchable, never in a model's context. */
  off_branch: ColumnType<boolean, boolean | undefined, boolean>;
}

/** An entry's vector under one embedding model (float32, little-endian); plain rows only, never sealed ones. */
export interface EntryEmbeddingsTable {
  agent_id: string;
  session_id: string;
  seq: ColumnType<number, number | bigint | string, number | bigint | string>;
  model: string;
  vector: Uint8Array;
  created_at: Timestamp;
}

/** One memory note's vector under an embedding model (plain notes only; an empty vector: nothing to embed). */
export interface MemoryNoteEmbeddingsTable {
  agent_id: string;
  note_id: string;
  model: string;
  vector: Uint8Array;
  created_at: Timestamp;
}

/** The dimensions an embedding model answered with first; a later answer of another size is refused. */
export interface EmbeddingModelsTable {
  model: string;
  dimensions: number;
  first_seen_at: Timestamp;
}

/**
 * The raw arguments of a tool call whose result is not stored yet. The transcript holds the call's
 * arguments redacted; the tool must run with what the model sent. Deleted with the result's append.
 */
export interface PendingToolArgsTable {
  agent_id: string;
  session_id: string;
  assistant_entry_id: string;
  tool_call_id: string;
  arguments: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

/** One row per compaction attempt. */
export interface CompactionsTable {
  id: string;
  agent_id: string;
  session_key: string;
  session_id: string;
  trigger: string;
  status: string;
  degraded: Generated<boolean>;
  error: string | null;
  attempts: Generated<number>;
  tokens_before: number | null;
  tokens_after: number | null;
  first_kept_entry_id: string | null;
  entry_id: string | null;
  retry_of: string | null;
  workflow_id: string | null;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  /** What the memory flush before this compaction did: `ran`, `skipped: <why>` or `failed: <error>`. */
  memory_flush: string | null;
  /** A revert: the compaction whose window it undid (its entry restores the window from before it). */
  revert_of: string | null;
  /** A rerun: the compaction whose range it summarized again. */
  rerun_of: string | null;
  /** A rerun's summary when it was not applied (an applied one lives in its compaction entry); sealed at rest. */
  summary: string | null;
  /** The model that summarized (null: extractive, or a revert). */
  summarizer_model: string | null;
  /** Summarizer model calls and tokens (prompt, cached or not, + output) this compaction spent: the spend limit sums them. */
  summarizer_calls: Generated<number>;
  summarizer_tokens: Generated<number>;
  /** What those calls were billed: uncached input, prompt-cache reads and writes, output (as the provider reported). */
  summarizer_input_tokens: Generated<number>;
  summarizer_cache_read_tokens: Generated<number>;
  summarizer_cache_write_tokens: Generated<number>;
  summarizer_output_tokens: Generated<number>;
  /** Some summarizer figures are Keel's own count: the server reported no usage. */
  summarizer_usage_estimated: Generated<boolean>;
  /** Why the summarizer was not called (spend limit reached), when it was not. */
  spend_limited: string | null;
}

/** A provider's real context window for a model, learned from its overflow errors (in Keel's token estimate). */
export interface ModelLimitsTable {
  model: string;
  context_window: number;
  provider_max_tokens: number | null;
  provider_message: string | null;
  learned_at: Timestamp;
}

/** Durable notes written by the pre-compaction memory flush. */
export interface MemoryNotesTable {
  id: string;
  agent_id: string;
  session_key: string;
  session_id: string;
  day: string;
  /** The note, or its sealed form when encryption at rest is on. */
  text: string;
  /** Blind index of a sealed note (HMACs of its words, src/security/blind-index.ts); null for a plain one. */
  text_terms: string[] | null;
  compaction_cycle: number;
  created_at: Timestamp;
}

/** The flush's structured checkpoint of a session (at most one; the next cycle's flush replaces it). */
export interface MemoryCheckpointsTable {
  agent_id: string;
  session_key: string;
  session_id: string;
  /** The compaction count when the flush ran: shown once the session's count is one higher. */
  compaction_cycle: number;
  flush_id: string;
  checkpoint: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

/** Subagent runs spawned by a parent session. */
export interface SubagentRunsTable {
  id: string;
  agent_id: string;
  parent_session_key: string;
  child_session_key: string;
  mode: string;
  depth: number;
  status: string;
  task: string;
  result: string | null;
  workflow_id: string | null;
  created_at: Timestamp;
  ended_at: Timestamp | null;
  /** The child session's agent (the parent's unless the spawn named another). */
  child_agent_id: string | null;
  /** The parent's session id at spawn time: a reset parent no longer hears from the child. */
  parent_session_id: string | null;
  tool_call_id: string | null;
  label: string | null;
  updated_at: Timestamp | null;
  /** The run budget the spawn asked for, as JSON (null: the child agent's own). */
  budget?: string | null;
}

/** One announce a parent took: (subagent, announce key) is claimed by the parent turn that writes its entry. */
export interface SubagentAnnouncesTable {
  subagent_id: string;
  /** The child request this announce answers (its task, a steer, or `killed`). */
  announce_key: string;
  parent_entry_id: string;
  created_at: Timestamp;
}

/**
 * Every session id a key has had, the current one included: rotation (reset, daily or idle expiry)
 * replaces `sessions.session_id`, and this is how maintenance and export still reach the earlier ones.
 */
export interface SessionIdsTable {
  agent_id: string;
  session_key: string;
  session_id: string;
  started_at: Timestamp;
  /** When a rotation replaced it; null while it is the key's current id. */
  ended_at: Timestamp | null;
}

/** A tool call that waited (or waits) for a person's decision; `note` holds an approval's note or a denial's reason. */
export interface ToolApprovalsTable {
  id: string;
  agent_id: string;
  session_key: string;
  session_id: string;
  tool_name: string;
  tool_call_id: string;
  /** The call's arguments, redacted. */
  arguments: Json<Record<string, unknown>>;
  approvers: Json<string[]> | null;
  deadline: Timestamp;
  /** pending, approved or denied. */
  status: string;
  decided_by: string | null;
  note: string | null;
  decided_at: Timestamp | null;
  created_at: Timestamp;
}

export interface Database {
  sessions: SessionsTable;
  session_ids: SessionIdsTable;
  transcript_entries: TranscriptEntriesTable;
  compactions: CompactionsTable;
  memory_notes: MemoryNotesTable;
  memory_checkpoints: MemoryCheckpointsTable;
  subagent_runs: SubagentRunsTable;
  subagent_announces: SubagentAnnouncesTable;
  model_limits: ModelLimitsTable;
  pending_tool_args: PendingToolArgsTable;
  tool_approvals: ToolApprovalsTable;
  entry_embeddings: EntryEmbeddingsTable;
  embedding_models: EmbeddingModelsTable;
  memory_note_embeddings: MemoryNoteEmbeddingsTable;
}

export type SessionRow = Selectable<SessionsTable>;
export type NewSessionRow = Insertable<SessionsTable>;
export type CompactionRow = Selectable<CompactionsTable>;
