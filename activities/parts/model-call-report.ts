import type { PreparedContext } from './prepare-context';
import { log } from '@temporalio/activity';
import type { Redaction } from '../../src/security/redact';
import type { ContextPruned } from '../../src/context/types';
import type { AppliedContextEdit } from '../../src/model/model-client';

/** Counts of what the context pipeline changed for one model call: the `model_call` line and the repair series. */
export function contextRepairs(context: PreparedContext): Record<string, number> {
  const p = context.pipeline;
  return {
    dropped_tool_calls: p.toolCallInputs.droppedToolCalls,
    synthetic_tool_results: p.pairing.added + p.pairingAfterLimit.added,
    dropped_tool_results:
      p.pairing.droppedDuplicateCount +
      p.pairing.droppedOrphanCount +
      p.pairingAfterLimit.droppedDuplicateCount +
      p.pairingAfterLimit.droppedOrphanCount,
    invalid_turn_fixes: p.turns
      ? p.turns.strippedPartialToolCalls +
        p.turns.droppedPartialToolResults +
        p.turns.droppedEmptyMessages +
        p.turns.droppedLeadingMessages
      : 0,
    history_limit_dropped: p.historyLimit.droppedMessageCount,
    stripped_details: p.strippedDetails,
    truncated_tool_results: context.truncated.length,
  };
}

/** What the call's context went without: the engine's cleared results and the provider's edits; undefined when nothing. */
export function contextPruned(
  context: PreparedContext,
  appliedEdits: readonly AppliedContextEdit[] | undefined,
): ContextPruned | undefined {
  const cleared = context.engine?.cleared ?? [];
  const edits = appliedEdits ?? [];
  const toolResults = cleared.length + edits.reduce((n, e) => n + (e.clearedToolUses ?? 0), 0);
  const providerTokens = edits.reduce((n, e) => n + e.clearedInputTokens, 0);
  if (toolResults === 0 && providerTokens === 0) return undefined;
  return { toolResults, chars: cleared.reduce((n, c) => n + c.chars, 0), providerTokens };
}

/** Secrets replaced in what was stored, by kind (`{ api_key: 1 }`). */
export function redactionCounts(redactions: readonly Redaction[]): Record<string, number> {
  return Object.fromEntries(redactions.map((r) => [r.kind, r.count]));
}

/**
 * One `redacted` line when secrets were replaced in something stored outside a model call's reply
 * (the user's message, a tool result, a summary, memory notes, a subagent's task or result).
 */
export function logRedactions(
  what: string,
  redactions: readonly Redaction[],
  facts: Record<string, unknown> = {},
): void {
  if (redactions.length === 0) return;
  log.info('redacted', { event: 'redacted', what, ...facts, redacted: redactionCounts(redactions) });
}
