/**
 * A token-budgeted engine (docs/architecture.md, "Where OpenClaw's behaviours live": session pruning): fits the context under the budget by clearing
 * old, large tool results, the way OpenClaw's session pruning does. Clearing is not persisted: the
 * stored transcript keeps the full output; only the assembled copy carries a short note.
 */
import { DEFAULTS } from '../config/defaults';
import { estimateTokens, TokenCache } from '../context/estimate-tokens';
import type { AgentMessage, ToolResultMessage } from '../context/types';
import type {
  AssembleParams,
  AssembleResult,
  ClearedToolResult,
  CompactParams,
  CompactResult,
  ContextEngine,
  ContextEngineOptions,
  IngestParams,
} from './types';

/** The note that replaces a cleared result's content. */
export function clearedNote(chars: number, toolName: string): string {
  return `[cleared: ${chars} chars of ${toolName || 'tool'} output]`;
}

/**
 * Clears tool results oldest first while the estimate exceeds `tokenBudget`: only results whose text
 * is longer than `minPrunableToolChars`, and none within the last `keepLastAssistants` assistant
 * exchanges. Reports each cleared result; `overBudget` says clearing was not enough (compaction's turn).
 */
export class BudgetedContextEngine implements ContextEngine {
  readonly id = 'budgeted';
  private readonly minPrunableToolChars: number;
  private readonly keepLastAssistants: number;
  private readonly cache = new TokenCache();

  constructor(options: ContextEngineOptions = {}) {
    this.minPrunableToolChars = options.minPrunableToolChars ?? DEFAULTS.minPrunableToolChars;
    this.keepLastAssistants = options.keepLastAssistants ?? DEFAULTS.keepLastAssistants;
  }

  async ingest(_params: IngestParams): Promise<void> {
    // The assembled view is derived from the stored transcript each turn; nothing to keep.
  }

  async assemble(params: AssembleParams): Promise<AssembleResult> {
    const { messages, tokenBudget } = params;
    const cache = params.tokenCache ?? this.cache;
    const estimates = messages.map((m) => this.estimate(m, cache));
    let total = estimates.reduce((a, b) => a + b, 0);
    const cleared: ClearedToolResult[] = [];
    if (total <= tokenBudget) return { messages, estimatedTokens: total, report: { cleared, overBudget: false } };

    const protectedFrom = this.protectedStart(messages);
    const out = messages.slice();
    for (let i = 0; i < protectedFrom && total > tokenBudget; i += 1) {
      const message = out[i];
      if (message.role !== 'toolResult') continue;
      const chars = textChars(message);
      if (chars <= this.minPrunableToolChars || message.content.some((b) => b.type === 'image')) continue;
      const replacement: ToolResultMessage = { ...message, content: [{ type: 'text', text: clearedNote(chars, message.toolName) }] };
      delete replacement.details;
      const estimate = this.estimate(replacement, cache);
      total += estimate - estimates[i];
      estimates[i] = estimate;
      out[i] = replacement;
      cleared.push({ index: i, toolCallId: message.toolCallId, toolName: message.toolName, chars });
    }
    return {
      messages: cleared.length > 0 ? out : messages,
      estimatedTokens: total,
      report: { cleared, overBudget: total > tokenBudget },
    };
  }

  async compact(_params: CompactParams): Promise<CompactResult> {
    return { delegated: true };
  }

  /** Index of the `keepLastAssistants`-th last assistant message: it and everything after are kept. */
  private protectedStart(messages: AgentMessage[]): number {
    if (this.keepLastAssistants <= 0) return messages.length;
    let seen = 0;
    for (let i = messages.length - 1; i >= 0; i -= 1) {
      if (messages[i].role === 'assistant' && ++seen === this.keepLastAssistants) return i;
    }
    return 0;
  }

  private estimate(message: AgentMessage, cache: TokenCache): number {
    return cache.getOrCompute(undefined, message, () => estimateTokens(message));
  }
}

function textChars(message: ToolResultMessage): number {
  return message.content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0);
}
