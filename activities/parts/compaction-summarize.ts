/**
 * The compaction's summarizer calls: a planned chunk (read by its entry range), the whole range on the
 * conversation's prompt cache, the merge of partial summaries, and the quality guard's one revision.
 */
import { serializeEntriesForSummary } from '../../src/compaction/serialize-for-summary';
import { identifierPolicyInstruction } from '../../src/compaction/prompts';
import { toActivityFailure } from '../../src/model/failures';
import { forAgent, readRange, type CompactionContext } from './compaction-context';
import type {
  ReviseSummaryInput,
  SummarizeChunkInput,
  SummarizeOnCacheInput,
  SummarizeTextInput,
} from './compaction-io';
import { learnFromOverflow } from './model-window';
import { summarizeOnPromptCache } from './summary-on-prompt-cache';
import { providerSummary } from './compaction-provider-summary';

/** Summarizes one planned chunk, read from the database by its entry range. */
export async function summarizeChunk(ctx: CompactionContext, input: SummarizeChunkInput): Promise<string> {
  const entries = await readRange(ctx, input, input);
  const text = serializeEntriesForSummary(entries, input.oversized, input.mode);
  const ask = { text, previousSummary: input.previousSummary, instructions: input.instructions };
  return providerSummary(ctx, input, ask, () =>
    forAgent(ctx, input).summarizer.summarizeFitting(text, input.previousSummary, input.instructions),
  );
}

/**
 * The summary of the whole planned range asked on the conversation's own prompt cache (see
 * summary-on-prompt-cache.ts); `{}` when the configuration, the summarizer or the session's last
 * call rule it out, or the call failed: the workflow then summarizes the planned chunks.
 */
export async function summarizeOnCache(
  ctx: CompactionContext,
  input: SummarizeOnCacheInput,
): Promise<{ summary?: string }> {
  const { deps, summarizer } = forAgent(ctx, input);
  // A compaction provider writes the summaries of an agent that has one.
  if (!deps.config.compactionPromptCache || input.summarizerModel || deps.config.compactionProvider) return {};
  const summary = await summarizeOnPromptCache(deps, summarizer, input);
  return summary === undefined ? {} : { summary };
}

/** Summarizes a given text: the merge of labelled partial summaries. */
export async function summarizeText(ctx: CompactionContext, input: SummarizeTextInput): Promise<string> {
  return providerSummary(ctx, input, input, () =>
    forAgent(ctx, input).summarizer.summarizeFitting(input.text, input.previousSummary, input.instructions),
  );
}

/** The quality guard's one summarizer retry: rewrite the summary keeping the listed identifiers and statements verbatim. */
export async function reviseSummary(ctx: CompactionContext, input: ReviseSummaryInput): Promise<string> {
  const { deps, summarizer } = forAgent(ctx, input);
  const prompt = `<summary>\n${input.summary}\n</summary>\n\n${revisionInstructions(input)}`;
  try {
    return await summarizer.call(prompt);
  } catch (err) {
    await learnFromOverflow(deps, summarizer.modelName, err, summarizer.countTokens(prompt), input).catch(
      () => undefined,
    );
    throw toActivityFailure(err);
  }
}

/** What the revision asks: the lost identifiers verbatim, the unquoted decisions and instructions word for word. */
function revisionInstructions(input: ReviseSummaryInput): string {
  const unkept = input.unkept ?? [];
  return [
    input.missing.length
      ? 'The summary above lost identifiers. Rewrite it, keeping its structure and content, so that each of these appears verbatim:'
      : '',
    input.missing.map((id) => `- ${id}`).join('\n'),
    unkept.length
      ? `${input.missing.length ? 'Also quote' : 'The summary above lost decisions and instructions. Rewrite it, keeping its structure and content, quoting'} each of these word for word with its time, under "## Decisions" or "## Instructions and preferences":`
      : '',
    unkept.map((line) => `- ${line}`).join('\n'),
    identifierPolicyInstruction(input.identifierPolicy),
  ]
    .filter(Boolean)
    .join('\n\n');
}
