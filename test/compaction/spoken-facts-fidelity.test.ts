/**
 * What people said survives stacked extractive compactions: a 1,800-line session with planted
 * decisions, preferences, an instruction, a deadline, a person's role and an error with its cause
 * is compacted 10 times in sequence through the functions the compaction activities call (plan on
 * the entries since the last cut with the previous summary; the summary's budget from what it
 * replaces; the extractive summary). Every fact is in the last summary with its time, and no
 * summary exceeds its budget. `test/compaction-workflow/spoken-facts.test.ts` runs the same session
 * through the real workflow.
 */
import { extractiveSummary } from '../../src/compaction/extractive-summary';
import { planCompaction } from '../../src/compaction/plan-compaction';
import { summaryCharBudget } from '../../src/compaction/summary-budget';
import { identifierCharBudget } from '../../src/compaction/identifier-budget';
import { PRESERVED_IDENTIFIERS_HEADING } from '../../src/compaction/quality-guard';
import type { PlanEntry } from '../../src/compaction/types';
import { estimateTokens } from '../../src/context/estimate-tokens';
import type { AgentMessage } from '../../src/context/types';
import { plantedSession, PLANTED_FACTS } from './planted-session';

const WINDOW = 200_000;
const COMPACTIONS = 10;

/** The summary without its identifier listing, which has its own budget (`identifierCharBudget`). */
function prose(summary: string): string {
  const at = summary.indexOf(`\n${PRESERVED_IDENTIFIERS_HEADING}`);
  return at < 0 ? summary : summary.slice(0, at);
}

describe('spoken facts through 10 stacked extractive compactions', () => {
  const { entries, plantedAt } = plantedSession('s-spoken');
  const messages: PlanEntry[] = entries.flatMap((e) =>
    e.type === 'message' ? [{ id: e.id, message: e.message }] : [],
  );
  const cache = new Map<AgentMessage, number>();
  const estimate = (m: AgentMessage) => cache.get(m) ?? cache.set(m, estimateTokens(m)).get(m)!;

  it('keeps every planted fact, with its time, and no summary exceeds its budget', () => {
    let summary: string | undefined;
    let start = 0;
    const sizes: string[] = [];
    for (let k = 1; k <= COMPACTIONS; k++) {
      const end = Math.round((k * messages.length) / COMPACTIONS);
      const active = messages.slice(start, end);
      const last = k === COMPACTIONS;
      // The last one is a hard checkpoint: every fact must be in the summary itself.
      const plan = planCompaction(active, {
        contextWindow: WINDOW,
        keepRecentTokens: last ? undefined : 3_000,
        estimate,
        previousSummary: summary,
      });
      const budget = summaryCharBudget(WINDOW, {
        summarizedTokens: plan.summarizedTokens,
        previousSummaryChars: summary?.length ?? 0,
      });
      summary = extractiveSummary({
        previousSummary: summary,
        messages: active.slice(0, plan.summarizedEntryCount).map((e) => e.message),
        policy: 'strict',
        maxChars: budget,
        maxIdentifierChars: identifierCharBudget(WINDOW),
      });
      expect(prose(summary).length).toBeLessThanOrEqual(budget);
      sizes.push(`${summary.length}/${budget}`);
      start = plan.firstKeptEntryId === null ? end : messages.findIndex((e) => e.id === plan.firstKeptEntryId);
    }
    process.stdout.write(`spoken facts: summary chars/budget per compaction: ${sizes.join(' ')}\n`);
    const final = summary!;
    for (const fact of PLANTED_FACTS)
      expect(final).toContain(`[${plantedAt.get(fact.text)}] ${fact.role}: ${fact.text}`);
    // Routine requests fell out (the oldest of the lowest value first); no planted fact did.
    expect(final).not.toContain('Please look at the queue metrics for shard 0.');
    expect(final).toContain('In total: ');
  });
});
