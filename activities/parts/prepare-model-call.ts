/**
 * What one model call sends (a turn's call, or a summary asked on its prompt cache): the system
 * prompt, then the conversation budgeted against the window less the prompt and the tools.
 */
import type { ActivityDeps } from '../../src/runtime/deps';
import type { ActiveWindowCache } from '../../src/store/active-window-cache';
import type { ContextSplit } from '../../src/protocol';
import type { ModelTool } from '../../src/model/model-client';
import { prepareContext, type PreparedContext } from './prepare-context';
import { systemPromptForTurn, type PromptInput } from './system-prompt-for-turn';

/** What a turn's model call sends: the prepared messages within what the system prompt and tools leave. */
export interface PreparedCall {
  readonly context: PreparedContext;
  /** The full system prompt, the context engine's addition at its end. */
  readonly system: string;
  readonly split: ContextSplit;
  /** Estimated tokens of everything sent (system prompt, tools, messages). */
  readonly contextTokens: number;
  /** The tool definitions to send. */
  readonly tools: readonly ModelTool[];
}

/** The system prompt, then the context budgeted against the window less the prompt and the tools. */
export async function prepareModelCall(
  deps: ActivityDeps,
  input: PromptInput & { readonly model: string; readonly window: number },
  windows?: ActiveWindowCache,
): Promise<PreparedCall> {
  // The turn's window serves the prompt's spawn policy and the context budget.
  const { window } = input;
  const prompt = await systemPromptForTurn(deps, input);
  const { systemTokens, bootstrapTokens, toolTokens } = prompt.overhead;
  const overheadTokens = systemTokens + bootstrapTokens + toolTokens;
  const context = await prepareContext(deps, input.agentId, input.sessionKey, input.sessionId, {
    overheadTokens,
    window,
    ...(input.model ? { model: input.model } : {}),
    ...(windows ? { windows } : {}),
    ...(input.beforeEntryId ? { beforeEntryId: input.beforeEntryId } : {}),
  });
  return {
    context,
    system: withAddition(prompt.text, context.systemPromptAddition),
    split: { ...prompt.overhead, historyTokens: context.estimatedTokens },
    contextTokens: context.estimatedTokens + overheadTokens,
    tools: prompt.tools,
  };
}

/** The prompt with the context engine's addition at its end. */
function withAddition(prompt: string, addition: string | undefined): string {
  return addition && addition.trim() !== '' ? `${prompt}\n\n${addition.trim()}` : prompt;
}
