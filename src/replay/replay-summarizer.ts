/**
 * How a replayed compaction writes its summary: the extractive summary (default, no model), or the
 * configured summarizer model through the compaction workflow's own chain — chunks of the plan,
 * `summarizeWithFallback` (full → without oversized → partial, merge), the quality guard. When every
 * model attempt fails, the compaction cycle writes the extractive summary, as the workflow does.
 */
import { summarizeWithFallback } from '../compaction/summarize-with-fallback';
import { SummarizationFailedError } from '../compaction/errors';
import {
  buildSummarizePrompt,
  chunkLabel,
  chunkSummaryInstructions,
  mergeSummaryInstructions,
  SUMMARIZER_SYSTEM_PROMPT,
} from '../compaction/prompts';
import { serializeEntriesForSummary } from '../compaction/serialize-for-summary';
import { collectFacts, extractiveSummary } from '../compaction/extractive-summary';
import { guardSummary } from '../compaction/quality-guard';
import { summaryCharBudget, type ReplacedContent } from '../compaction/summary-budget';
import { identifierCharBudget } from '../compaction/identifier-budget';
import type { CompactionPlan, PlanEntry } from '../compaction/types';
import type { ModelClient } from '../model/model-client';
import { DEFAULTS } from '../config/defaults';

/** What one compaction hands its summarizer. */
export interface SummarizeInput {
  readonly plan: CompactionPlan;
  /** The entries before the cut, in order (the plan's chunks cover them). */
  readonly summarized: readonly PlanEntry[];
  readonly previousSummary?: string;
  readonly contextWindow: number;
}

/** A compaction's summary; undefined when none could be had (the compaction then writes the extractive one, degraded). */
export type ReplaySummarizer = (input: SummarizeInput) => Promise<string | undefined>;

/** What a compaction's summary replaces, as the workflow passes it to the summary's budget. */
function replacedBy(input: SummarizeInput): ReplacedContent {
  return { summarizedTokens: input.plan.summarizedTokens, previousSummaryChars: input.previousSummary?.length ?? 0 };
}

/** The model-free summary (what a compaction writes when it has no model). */
export function extractiveSummaryOf(input: SummarizeInput): string {
  return extractiveSummary({
    ...(input.previousSummary ? { previousSummary: input.previousSummary } : {}),
    messages: input.summarized.map((e) => e.message),
    policy: 'strict',
    maxChars: summaryCharBudget(input.contextWindow, replacedBy(input)),
    maxIdentifierChars: identifierCharBudget(input.contextWindow),
  });
}

/** A policy with `"summarizer": "extractive"`: the model-free summary, which never fails. */
export const extractiveSummarizer: ReplaySummarizer = async (input) => extractiveSummaryOf(input);

/**
 * Summaries from `client` (model `model`), chunk by chunk as planned. Unlike the workflow it does
 * not split a chunk that overflows the summarizer's window, nor ask the model once more for lost
 * identifiers: the guard appends them, which the workflow also does when that retry fails.
 */
export function modelSummarizer(client: ModelClient, model: string): ReplaySummarizer {
  const call = async (text: string, previousSummary: string | undefined, instructions: string): Promise<string> => {
    const reply = await client.complete({
      model,
      system: SUMMARIZER_SYSTEM_PROMPT,
      messages: [{ role: 'user', content: buildSummarizePrompt(text, previousSummary, instructions) }],
      maxTokens: DEFAULTS.maxOutputTokens,
    });
    return reply.content
      .map((b) => (b.type === 'text' ? b.text : ''))
      .join('')
      .trim();
  };
  return async (input) => {
    const { plan, summarized, previousSummary } = input;
    const index = new Map(summarized.map((e, i) => [e.id, i]));
    const chunks = plan.chunks.map((c, i) => {
      const entries = summarized.slice(index.get(c.firstEntryId)!, index.get(c.lastEntryId)! + 1);
      const oversized = c.tokensWithoutOversized !== c.tokens;
      return {
        label: chunkLabel(i, plan.chunks.length, c.fromTimestamp, c.toTimestamp),
        text: serializeEntriesForSummary(entries, plan.oversized, 'full'),
        ...(oversized
          ? { textWithoutOversized: serializeEntriesForSummary(entries, plan.oversized, 'withoutOversized') }
          : {}),
      };
    });
    const options = { identifierPolicy: 'strict' as const };
    let text: string;
    try {
      text = (
        await summarizeWithFallback({
          chunks,
          ...(previousSummary ? { previousSummary } : {}),
          chunkInstructions: chunkSummaryInstructions(options),
          mergeInstructions: mergeSummaryInstructions(options),
          summarizeChunk: call,
        })
      ).summary;
    } catch (err) {
      if (!(err instanceof SummarizationFailedError)) throw err;
      return undefined;
    }
    const facts = collectFacts(
      previousSummary,
      summarized.map((e) => e.message),
      'strict',
    );
    const guarded = guardSummary(
      text,
      facts.identifiers,
      summaryCharBudget(input.contextWindow, replacedBy(input)),
      facts,
      identifierCharBudget(input.contextWindow),
    );
    return guarded.blank ? undefined : guarded.summary;
  };
}
