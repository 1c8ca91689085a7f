/**
 * The context pipeline before each model call (OpenClaw's context assembly flow), as one pure function.
 */
import { limitHistoryTurns } from './limit-history-turns';
import { repairToolCallInputs } from './repair-tool-call-inputs';
import { repairToolUseResultPairing } from './repair-tool-use-result-pairing';
import { stripToolResultDetails } from './strip-tool-result-details';
import type { AgentMessage } from './types';
import { validateTurns, type TurnValidationReport } from './validate-turns';

export interface ContextPipelineOptions {
  /** Provider id: `anthropic`-like ids get Anthropic turn rules, `google`/`gemini` ids Gemini's, others none. */
  provider: string;
  /** User turns to keep (see `resolveHistoryLimit`); undefined keeps all. */
  historyLimit?: number | undefined;
  /** Tool names the agent has; calls to others are dropped. */
  allowedToolNames?: Iterable<string> | undefined;
}

/** Counts from a pairing repair step. */
export interface PairingCounts {
  added: number;
  droppedDuplicateCount: number;
  droppedOrphanCount: number;
  moved: boolean;
}

export interface ContextPipelineReport {
  toolCallInputs: { droppedToolCalls: number; droppedAssistantMessages: number };
  pairing: PairingCounts;
  /** Which turn rules ran, and what they changed (undefined when the provider has none). */
  turns?: ({ rules: 'anthropic' | 'gemini' } & TurnValidationReport) | undefined;
  historyLimit: { limit?: number | undefined; droppedMessageCount: number };
  pairingAfterLimit: PairingCounts;
  strippedDetails: number;
}

export interface ContextPipelineResult {
  /** Messages ready for the context engine; the input array itself when nothing changed. */
  messages: AgentMessage[];
  report: ContextPipelineReport;
}

/**
 * Runs tool-call input repair → pairing repair → provider turn validation → `limitHistoryTurns`
 * (which re-runs pairing repair) → `stripToolResultDetails`, and reports each step's counts.
 * For provider `anthropic` Anthropic accepts the result (the property test checks it with an oracle).
 */
export function runContextPipeline(messages: AgentMessage[], options: ContextPipelineOptions): ContextPipelineResult {
  const inputs = repairToolCallInputs(messages, { allowedToolNames: options.allowedToolNames });
  const paired = repairToolUseResultPairing(inputs.messages);
  const rules = turnRulesFor(options.provider);
  const validated = rules
    ? validateTurns(paired.messages, { mergeAssistantsWithToolCalls: rules === 'gemini' })
    : undefined;
  const limited = limitHistoryTurns(validated?.messages ?? paired.messages, options.historyLimit);
  const stripped = stripToolResultDetails(limited.messages);
  return {
    messages: stripped,
    report: {
      toolCallInputs: {
        droppedToolCalls: inputs.droppedToolCalls,
        droppedAssistantMessages: inputs.droppedAssistantMessages,
      },
      pairing: counts(paired),
      turns: validated && rules ? { rules, ...validated.report } : undefined,
      historyLimit: { limit: options.historyLimit, droppedMessageCount: limited.droppedMessageCount },
      pairingAfterLimit: counts(limited.pairing),
      strippedDetails: stripped === limited.messages ? 0 : stripped.filter((m, k) => m !== limited.messages[k]).length,
    },
  };
}

/** Provider ids whose turn rules Keel enforces. */
export function turnRulesFor(provider: string): 'anthropic' | 'gemini' | undefined {
  const id = provider.toLowerCase();
  if (id.includes('anthropic') || id.includes('claude') || id.includes('bedrock')) return 'anthropic';
  if (id.includes('gemini') || id.includes('google')) return 'gemini';
  return undefined;
}

function counts(r: {
  added: unknown[];
  droppedDuplicateCount: number;
  droppedOrphanCount: number;
  moved: boolean;
}): PairingCounts {
  return {
    added: r.added.length,
    droppedDuplicateCount: r.droppedDuplicateCount,
    droppedOrphanCount: r.droppedOrphanCount,
    moved: r.moved,
  };
}
