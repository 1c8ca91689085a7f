/**
 * The summary's quality guard and the extractive summary: both read the planned range and fit the
 * summary's budget in the agent's window.
 */
import { log } from '@temporalio/activity';
import { depsForAgent } from '../../src/runtime/deps';
import { identifierCharBudget } from '../../src/compaction/identifier-budget';
import { guardSummary } from '../../src/compaction/quality-guard';
import { collectFacts, extractiveSummary } from '../../src/compaction/extractive-summary';
import { readRange, summaryBudget, type CompactionContext } from './compaction-context';
import type { ExtractiveSummaryInput, GuardSummaryInput, GuardSummaryResult } from './compaction-io';
import { effectiveWindow } from './model-window';

/**
 * Checks the summary keeps the protected identifiers of the summarized entries and of the previous
 * summary (the newest that fit the window's identifier budget), appends the missing ones in
 * "Preserved identifiers", and caps it.
 */
export async function guardSummaryStep(ctx: CompactionContext, input: GuardSummaryInput): Promise<GuardSummaryResult> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  const entries = await readRange(ctx, input, input);
  const messages = entries.map((e) => e.message);
  const facts = collectFacts(input.previousSummary, messages, input.identifierPolicy);
  const window = await effectiveWindow(deps, deps.config.model, input);
  const guarded = guardSummary(
    input.summary,
    facts.identifiers,
    summaryBudget(deps, window, input),
    facts,
    identifierCharBudget(window),
  );
  if (guarded.addedSections.length)
    log.info('summary guard added sections the summarizer left out', { sections: guarded.addedSections });
  return { summary: guarded.summary, missing: guarded.appended, unkept: guarded.unkept, blank: guarded.blank };
}

/** The deterministic summary written when no model summary could be had (never "No prior history."). */
export async function extractiveSummaryStep(ctx: CompactionContext, input: ExtractiveSummaryInput): Promise<string> {
  const deps = depsForAgent(ctx.allDeps, input.agentId);
  const entries = await readRange(ctx, input, input);
  const window = await effectiveWindow(deps, deps.config.model, input);
  return extractiveSummary({
    ...(input.previousSummary ? { previousSummary: input.previousSummary } : {}),
    messages: entries.map((e) => e.message),
    policy: input.identifierPolicy,
    maxChars: summaryBudget(deps, window, input),
    maxIdentifierChars: identifierCharBudget(window),
  });
}
