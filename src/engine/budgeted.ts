/**
 * A token-budgeted engine (docs/openclaw.md: session pruning): fits the context under the budget by clearing
 * old, large tool results, the way OpenClaw's session pruning does, and with a pruning TTL also clears
 * them once the session was idle longer than the TTL. Clearing is not persisted: the
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
 * Clears tool results: only results whose text is longer than `minPrunableToolChars`, and none within
 * the last `keepLastAssistants` assistant exchanges. With `pruningTtl`, every such result older than an
 * idle gap longer than the TTL is cleared (idle); then results are cleared oldest first while the
 * estimate exceeds `tokenBudget` (budget). Reports each cleared result; `overBudget` says clearing was
 * not enough (compaction's turn).
 *
 * The idle decision reads the messages' own timestamps (the workflow clock that stamped them), not the
 * wall clock: a later turn of the same session clears the same results, so the prompt prefix stays
 * stable for the provider's cache until the next idle gap.
 */
export class BudgetedContextEngine implements ContextEngine {
  readonly id = 'budgeted';
  private readonly minPrunableToolChars: number;
  private readonly keepLastAssistants: number;
  private readonly pruningTtl: number | undefined;
  private readonly cache = new TokenCache();

  constructor(options: ContextEngineOptions = {}) {
    this.minPrunableToolChars = options.minPrunableToolChars ?? DEFAULTS.minPrunableToolChars;
    this.keepLastAssistants = options.keepLastAssistants ?? DEFAULTS.keepLastAssistants;
    this.pruningTtl = options.pruningTtl;
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
    const idleBefore = this.pruningTtl === undefined ? 0 : lastIdleGap(messages, this.pruningTtl);
    if (total <= tokenBudget && idleBefore === 0)
      return { messages, estimatedTokens: total, report: { cleared, overBudget: false } };

    const protectedFrom = this.protectedStart(messages);
    const out = messages.slice();
    const done = new Set<number>();
    const clear = (i: number, reason: ClearedToolResult['reason']) => {
      const message = out[i];
      if (message.role !== 'toolResult' || done.has(i)) return;
      const chars = textChars(message);
      if (chars <= this.minPrunableToolChars || message.content.some((b) => b.type === 'image')) return;
      const replacement: ToolResultMessage = {
        ...message,
        content: [{ type: 'text', text: clearedNote(chars, message.toolName) }],
      };
      delete replacement.details;
      const estimate = this.estimate(replacement, cache);
      total += estimate - estimates[i];
      estimates[i] = estimate;
      out[i] = replacement;
      done.add(i);
      cleared.push({ index: i, toolCallId: message.toolCallId, toolName: message.toolName, chars, reason });
    };
    for (let i = 0; i < Math.min(protectedFrom, idleBefore); i += 1) clear(i, 'idle');
    for (let i = 0; i < protectedFrom && total > tokenBudget; i += 1) clear(i, 'budget');
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

/**
 * Index of the newest user message that came more than `ttl` ms after the message before it (the
 * session was idle: no turn in between); 0 when there was no such gap. Messages without timestamps
 * never make a gap.
 */
function lastIdleGap(messages: readonly AgentMessage[], ttl: number): number {
  for (let i = messages.length - 1; i > 0; i -= 1) {
    const at = messages[i].timestamp;
    const before = messages[i - 1].timestamp;
    if (messages[i].role === 'user' && at !== undefined && before !== undefined && at - before > ttl) return i;
  }
  return 0;
}

function textChars(message: ToolResultMessage): number {
  return message.content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0);
}
