/**
 * The context-engine slot (OpenClaw's `ContextEngine` interface): one engine per process assembles
 * what the model sees under a token budget. Methods are async because engines may do I/O (RAG, stores).
 */
import type { AgentMessage } from '../context/types';
import type { TokenCache } from '../context/estimate-tokens';
import type { ContextManagement } from '../model/model-client';

export interface SessionRef {
  sessionId: string;
  sessionKey?: string;
}

/** What `assemble` returns (OpenClaw's `AssembleResult`), plus what the engine removed. */
export interface AssembleResult {
  /** Ordered messages for the model context. */
  messages: AgentMessage[];
  /** Token estimate of those messages (safety margin included). */
  estimatedTokens: number;
  /** Optional text appended to the system prompt. */
  systemPromptAddition?: string;
  /** What the engine changed to fit the budget (absent for pass-through engines). */
  report?: AssembleReport;
  /** Server-side context management to ask of a provider that has it (see `ModelClient.supportsContextManagement`). */
  contextManagement?: ContextManagement;
}

export interface ClearedToolResult {
  /** Index in the assembled messages. */
  index: number;
  toolCallId: string;
  toolName: string;
  /** Characters of text output replaced. */
  chars: number;
  /** Why: the session was idle past the pruning TTL, or the context was over budget. */
  reason: 'idle' | 'budget';
}

export interface AssembleReport {
  cleared: ClearedToolResult[];
  /** True when the messages still exceed the budget after everything allowed was cleared. */
  overBudget: boolean;
}

/** `compact` may hand the work to Keel's compaction workflow, or report what it did itself. */
export type CompactResult =
  | { delegated: true }
  | { delegated: false; compacted: boolean; reason?: string; tokensBefore?: number; tokensAfter?: number };

export type AssembleParams = SessionRef & {
  messages: AgentMessage[];
  tokenBudget: number;
  /** Estimates already known (Keel seeds it from the per-entry estimates stored with each entry). */
  tokenCache?: TokenCache;
};
export type CompactParams = SessionRef & { messages: readonly AgentMessage[]; tokenBudget?: number; trigger?: string };
export type IngestParams = SessionRef & { message: AgentMessage; entryId?: string };

/**
 * OpenClaw's context-engine lifecycle; optional methods may be absent. A worker builds one instance
 * per agent config and keeps it (src/engine/engine-slot.ts says when each method is called): state
 * kept per session lives from `bootstrap` to `dispose`, and must be rebuildable from `bootstrap`.
 */
export interface ContextEngine {
  readonly id: string;
  /** The worker meets the session (new, imported, or taken from another worker): its active window. */
  bootstrap?(params: SessionRef & { messages: readonly AgentMessage[] }): Promise<void>;
  /** One stored message, once per worker, in order (when the engine has no `ingestBatch`). */
  ingest(params: IngestParams): Promise<void>;
  /** The messages stored since the last ingest, in order, as one call. */
  ingestBatch?(params: SessionRef & { messages: readonly AgentMessage[] }): Promise<void>;
  /** After a successful turn (persist, schedule background work). */
  afterTurn?(params: SessionRef & { messages: readonly AgentMessage[]; contextTokens?: number }): Promise<void>;
  /** Assemble the model context within `tokenBudget` tokens; a throw falls back to `legacy` for the call. */
  assemble(params: AssembleParams): Promise<AssembleResult>;
  /** Keel is about to compact: compress the context yourself, or delegate to Keel's compaction. */
  compact(params: CompactParams): Promise<CompactResult>;
  /** Prepare state before a subagent starts. */
  prepareSubagentSpawn?(params: { parentSessionKey: string; childSessionKey: string }): Promise<void>;
  /** A subagent run ended. */
  onSubagentEnded?(params: { childSessionKey: string; outcome: 'ok' | 'error' | 'killed' | 'timeout' }): Promise<void>;
  /** The worker dropped the session (evicted, or the worker stops): release what is kept for it. */
  dispose?(params: SessionRef): Promise<void>;
}

/** Settings an engine factory may read. */
export interface ContextEngineOptions {
  /** Tool results up to this many characters are never cleared (default 50,000). */
  minPrunableToolChars?: number | undefined;
  /** The last N assistant exchanges are never cleared (default 3). */
  keepLastAssistants?: number | undefined;
  /**
   * Milliseconds without a turn after which old tool output is cleared even under budget (a
   * pruning TTL); unset: only the budget clears.
   */
  pruningTtl?: number | undefined;
  /** anthropic-native: and its other settings (`anthropic-native-options.ts`). */
  [option: string]: unknown;
}

export type ContextEngineFactory = (options: ContextEngineOptions) => ContextEngine;
