/**
 * A summary from the agent's compaction provider, when it has one (src/compaction/compaction-providers.ts):
 * handed the same text, rules and prompt as Keel's summarizer, billed on the compaction like its
 * calls, and replaced by Keel's summarizer when it throws or returns nothing. A cancelled activity
 * re-throws instead.
 */
import { Context, log } from '@temporalio/activity';
import { compactionProviderFor, summaryFromProvider } from '../../src/compaction/compaction-providers';
import { buildSummarizePrompt, SUMMARIZER_SYSTEM_PROMPT } from '../../src/compaction/prompts';
import { depsForAgent } from '../../src/runtime/deps';
import { spendGuard, type CompactionContext } from './compaction-context';
import type { CompactionRef } from './compaction-io';

/** What a summary is asked of: the serialized text, the summary so far and the rules. */
export interface SummaryAsk {
  readonly text: string;
  readonly previousSummary?: string | undefined;
  readonly instructions: string;
}

/** The provider's summary, or `builtin()`'s when there is no provider or it gave none. */
export async function providerSummary(
  ctx: CompactionContext,
  ref: CompactionRef,
  ask: SummaryAsk,
  builtin: () => Promise<string>,
): Promise<string> {
  const deps = depsForAgent(ctx.allDeps, ref.agentId);
  // An operator's `rerun --model` asks for that model, not the provider.
  const provider = ref.summarizerModel ? undefined : compactionProviderFor(deps.config.compactionProvider);
  if (!provider) return builtin();
  const spend = spendGuard(ctx, deps, ref);
  await spend.beforeCall();
  const request = {
    agentId: ref.agentId,
    sessionKey: ref.sessionKey,
    sessionId: ref.sessionId,
    compactionId: ref.compactionId,
    text: ask.text,
    previousSummary: ask.previousSummary,
    instructions: ask.instructions,
    prompt: buildSummarizePrompt(ask.text, ask.previousSummary, ask.instructions),
    systemPrompt: SUMMARIZER_SYSTEM_PROMPT,
    signal: Context.current().cancellationSignal,
  };
  return summaryFromProvider(provider, request, {
    builtin,
    bill: ({ model, ...billing }) => spend.afterCall(billing, model),
    warn: (message) => log.warn(message),
  });
}
