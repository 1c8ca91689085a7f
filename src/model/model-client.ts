/**
 * The one interface Keel calls models through. Requests and responses use Keel's message shapes
 * (`src/context/types.ts`); each implementation converts to its provider's wire format inside itself.
 */
import type { AgentMessage, AssistantBlock, StopReason } from '../context/types';
import type { ThinkingRequest } from './thinking-plan';

/** A tool the model may call; `inputSchema` is a JSON Schema object. */
export interface ModelTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One model call. */
export interface ModelRequest {
  model: string;
  system?: string;
  messages: AgentMessage[];
  tools?: readonly ModelTool[];
  /**
   * `none`: the tools stay defined (the conversation holds tool calls) but the model may not call
   * one; a run's last call at its budget asks for a report this way. Default: the model chooses.
   */
  toolChoice?: 'auto' | 'none';
  maxTokens: number;
  /** Ignored while `thinking` is on (Anthropic refuses a temperature beside thinking). */
  temperature?: number;
  /**
   * Think before answering: Anthropic's `thinking` with `budgetTokens` (within `maxTokens`), an
   * OpenAI-compatible server's `reasoning_effort` at `level`. Absent: no thinking asked for.
   */
  thinking?: ThinkingRequest;
  /**
   * Mark the stable prefix (tools, system prompt, conversation so far) for the provider's prompt
   * cache where the provider needs markers (Anthropic `cache_control`). Default off.
   */
  promptCaching?: boolean;
  /**
   * The first this-many messages repeat an earlier call's: with `promptCaching`, markers go where
   * that call put them and the messages after carry none (default: every message is this call's).
   */
  cachedPrefixMessages?: number;
  /**
   * Provider-side context management (server compaction, context editing). Only a client whose
   * `supportsContextManagement` is true sends it; others never receive it (Keel compacts instead).
   */
  contextManagement?: ContextManagement;
  /**
   * The conversation starts after a provider-native compaction: the first message's first block is
   * Keel's summary stand-in, sent as the provider's own compaction block instead.
   */
  providerCompaction?: ProviderCompaction;
}

/** Server-side context management a request asks for (Anthropic's `context_management` edits). */
export interface ContextManagement {
  /** Server compaction: summarize the conversation once the prompt reaches `triggerTokens`; the reply pauses after it. */
  compaction?: { triggerTokens: number; instructions?: string | undefined } | undefined;
  /** Clear old tool results (and optionally their inputs) once the prompt reaches `triggerTokens`. */
  clearToolUses?: {
    triggerTokens?: number | undefined;
    keepToolUses?: number | undefined;
    clearAtLeastTokens?: number | undefined;
    excludeTools?: string[] | undefined;
    clearToolInputs?: boolean | undefined;
  };
  /** Clear thinking blocks of all but the last `keepTurns` assistant turns (`all` keeps every one). */
  clearThinking?: { keepTurns: number | 'all' } | undefined;
}

/** A provider's compaction block as it must be sent back: summary, opaque metadata and signature verbatim. */
export interface ProviderCompaction {
  /** The summary; null when the provider's compaction failed. */
  summary: string | null;
  encryptedContent?: string | null;
  signature?: string | null;
  /** Provider data sent back unchanged (Anthropic `tool_changes`). */
  toolChanges?: unknown[] | null;
}

/** One context edit the provider applied to this call's prompt (the stored transcript is unchanged). */
export interface AppliedContextEdit {
  type: string;
  clearedInputTokens: number;
  clearedToolUses?: number;
  clearedThinkingTurns?: number;
}

/** Progress events while a reply streams (heartbeats hang off these). */
export type ModelStreamEvent =
  | { type: 'messageStart' }
  | { type: 'text'; delta: string }
  | { type: 'thinking'; delta: string }
  | { type: 'toolCallStart'; id: string; name: string }
  | { type: 'toolCallInput'; partialJson: string }
  | { type: 'messageStop' };

/** Per-call options; all optional. */
export interface ModelCallOptions {
  /** Aborts the HTTP request (activity cancellation). */
  signal?: AbortSignal;
  /** Each text delta and all reply text so far (text blocks concatenated), in arrival order. */
  onText?: (delta: string, soFar: string) => void;
  /** Every progress event, for heartbeats. */
  onEvent?: (event: ModelStreamEvent) => void;
}

/** Token usage of one call as the provider reported it, or Keel's count of it when the provider reported none. */
export interface ModelUsage {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** The provider reported no usage: these figures are Keel's own count of the request and reply. */
  estimated?: true;
}

/** A complete reply: only returned when the provider finished the message (never a cut-off partial). */
export interface ModelResponse {
  content: AssistantBlock[];
  stopReason: StopReason;
  usage: ModelUsage;
  model: string;
  /** The provider compacted the conversation and paused (stop reason `compaction`): record it, then call again. */
  compaction?: ProviderCompaction;
  /** Context edits the provider applied before the model saw the prompt. */
  appliedEdits?: AppliedContextEdit[];
  /** What the provider's compaction itself used (billed, but not part of `usage`). */
  compactionUsage?: ModelUsage;
}

/**
 * Calls a model once. Implementations make one HTTP request per call, a second only where the client
 * says why (an unstreamed probe of an empty stream); retries belong to Temporal. They throw the
 * typed errors of `./errors` (`ModelRateLimitedError`, `ContextOverflowError`, …).
 */
export interface ModelClient {
  /** True when the client sends `contextManagement` (Anthropic); others leave compaction to Keel. */
  readonly supportsContextManagement?: boolean;
  complete(request: ModelRequest, options?: ModelCallOptions): Promise<ModelResponse>;
}
