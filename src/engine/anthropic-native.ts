/**
 * The provider-native engine: Anthropic's server compacts and edits the context (beta
 * `context_management`: `compact_20260112` with `pause_after_compaction`, `clear_tool_uses_20250919`,
 * `clear_thinking_20251015`). Keel still sends its whole active window and records each server
 * compaction as its own compaction (row, entry, counters), so the next turn starts after it and
 * recall reaches the raw entries. With a provider that has no context management the request goes
 * without it and Keel's own compaction does the work (the turn says so once in the log).
 */
import { estimateMessagesTokens, TokenCache } from '../context/estimate-tokens';
import type { ContextManagement } from '../model/model-client';
import { contextManagementFromOptions } from './anthropic-native-options';
import type {
  AssembleParams,
  AssembleResult,
  CompactParams,
  CompactResult,
  ContextEngine,
  ContextEngineOptions,
  IngestParams,
} from './types';

export class AnthropicNativeContextEngine implements ContextEngine {
  readonly id = 'anthropic-native';
  private readonly contextManagement: ContextManagement;
  private readonly cache = new TokenCache();

  constructor(options: ContextEngineOptions = {}) {
    this.contextManagement = contextManagementFromOptions(options);
  }

  async ingest(_params: IngestParams): Promise<void> {
    // The server keeps nothing between calls; Keel's store is the history.
  }

  /** Passes the messages through (the server edits its copy) and asks for the edits. */
  async assemble(params: AssembleParams): Promise<AssembleResult> {
    return {
      messages: params.messages,
      estimatedTokens: estimateMessagesTokens(params.messages, { cache: params.tokenCache ?? this.cache }),
      contextManagement: this.contextManagement,
    };
  }

  /** Keel's compaction stays the fallback (manual, overflow, other providers). */
  async compact(_params: CompactParams): Promise<CompactResult> {
    return { delegated: true };
  }
}
