/**
 * The default engine (OpenClaw's `LegacyContextEngine`): passes messages through unchanged.
 */
import { estimateMessagesTokens, TokenCache } from '../context/estimate-tokens';
import type {
  AssembleParams,
  AssembleResult,
  CompactParams,
  CompactResult,
  ContextEngine,
  IngestParams,
} from './types';

/** Pass-through: `assemble` returns the messages as given (with their estimate); `compact` delegates. */
export class LegacyContextEngine implements ContextEngine {
  readonly id = 'legacy';
  // Keyed by message object: a session's unchanged messages are not re-tokenized each turn.
  private readonly cache = new TokenCache();

  async ingest(_params: IngestParams): Promise<void> {
    // Keel's store persists entries; nothing to keep here.
  }

  async assemble(params: AssembleParams): Promise<AssembleResult> {
    return {
      messages: params.messages,
      estimatedTokens: estimateMessagesTokens(params.messages, { cache: params.tokenCache ?? this.cache }),
    };
  }

  async compact(_params: CompactParams): Promise<CompactResult> {
    return { delegated: true };
  }
}
