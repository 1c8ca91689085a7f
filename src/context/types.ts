import type { TurnStopReason } from '../protocol';
/**
 * Message and transcript-entry shapes, as in Pi / OpenClaw JSONL transcripts.
 * Keel's pipeline works on these; conversion to the Anthropic SDK's `tool_use` / `tool_result`
 * happens only at the model edge (`src/model/`).
 */

export interface TextBlock {
  type: 'text';
  text: string;
}
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature?: string;
}
/** Images are stored by reference (or inline base64 on import); never tokenized as text. */
export interface ImageBlock {
  type: 'image';
  source?: unknown;
  url?: string;
  mimeType?: string;
  data?: string;
}

/** Tool-call block type names seen in real transcripts; Keel writes `toolCall`. */
export const TOOL_CALL_BLOCK_TYPES = [
  'toolCall',
  'toolUse',
  'functionCall',
  'tool_use',
  'tool_call',
  'function_call',
] as const;
export type ToolCallBlockType = (typeof TOOL_CALL_BLOCK_TYPES)[number];

export interface ToolCallBlock {
  type: ToolCallBlockType;
  id: string;
  name: string;
  /** Keel writes `arguments`; imported transcripts may carry `input` instead. */
  arguments?: Record<string, unknown>;
  input?: Record<string, unknown>;
}

export type UserContent = string | Array<TextBlock | ImageBlock>;
export type AssistantBlock = TextBlock | ThinkingBlock | ToolCallBlock;

export interface UserMessage {
  role: 'user';
  content: UserContent;
  timestamp?: number;
}

export type StopReason = 'stop' | 'toolUse' | 'length' | 'error' | 'aborted' | string;

export interface AssistantMessage {
  role: 'assistant';
  content: AssistantBlock[];
  stopReason?: StopReason | undefined;
  model?: string;
  /** `estimated`: the server reported no usage, these are Keel's count. */
  usage?: {
    input?: number;
    output?: number;
    cacheRead?: number;
    cacheWrite?: number;
    totalTokens?: number;
    estimated?: true;
  };
  errorMessage?: string;
  timestamp?: number;
  /** Keel's note of tool output the context of this reply's call went without; never sent to a model. */
  pruned?: ContextPruned;
  /** Keel's note that this reply is a run's report at its budget (its figures); never sent to a model. */
  runStop?: TurnStopReason;
}

/**
 * Tool output a model call's context went without: results Keel's context engine cleared (their
 * characters), and what the provider's context edits cleared (tool uses and input tokens).
 */
export interface ContextPruned {
  readonly toolResults: number;
  readonly chars: number;
  readonly providerTokens: number;
}

export interface ToolResultMessage {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: Array<TextBlock | ImageBlock>;
  isError?: boolean;
  /** Tool-private data: stored, never sent to a model or a summarizer. */
  details?: unknown;
  timestamp?: number;
}

export type AgentMessage = UserMessage | AssistantMessage | ToolResultMessage;

interface EntryBase {
  id: string;
  parentId: string | null;
  timestamp: string;
}

export interface SessionHeaderEntry {
  type: 'session';
  id: string;
  version?: number;
  timestamp: string;
  cwd?: string;
  [k: string]: unknown;
}
export interface MessageEntry extends EntryBase {
  type: 'message';
  message: AgentMessage;
  /** On a user entry a system event wrote (cron, heartbeat, …): which, so the session's event stream can say it. */
  systemEvent?: SystemEventKind;
}

/** The events that run a turn without a person asking (a subagent's report has its own record). */
export type SystemEventKind = 'heartbeat' | 'cron' | 'exec_notice' | 'bookkeeping';
export interface CompactionEntry extends EntryBase {
  type: 'compaction';
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  /** A revert: the compaction whose window this entry undid (it restores the window from before it). */
  revertOf?: string;
  /** An applied rerun: the compaction whose range this summary covers again. */
  rerunOf?: string;
  /**
   * The compaction entry whose summarized range this entry's summary stands for, when not its own
   * (reverts and reruns re-express an earlier state). A revert without it restores no summary at all.
   */
  rangeOf?: string;
}
export interface CustomMessageEntry extends EntryBase {
  type: 'custom_message';
  customType: string;
  content: UserContent;
  display?: boolean;
  details?: unknown;
}
export interface CustomEntry extends EntryBase {
  type: 'custom';
  customType: string;
  data?: unknown;
}
export interface BranchSummaryEntry extends EntryBase {
  type: 'branch_summary';
  fromId: string;
  summary: string;
}

export type TranscriptEntry =
  SessionHeaderEntry | MessageEntry | CompactionEntry | CustomMessageEntry | CustomEntry | BranchSummaryEntry;

/** Reads a tool call's arguments whichever field the transcript used. */
export function toolCallArguments(block: ToolCallBlock): Record<string, unknown> | undefined {
  return block.arguments ?? block.input;
}

/** True for any of the tool-call block type spellings. */
export function isToolCallBlock(block: { type: string }): block is ToolCallBlock {
  return (TOOL_CALL_BLOCK_TYPES as readonly string[]).includes(block.type);
}
