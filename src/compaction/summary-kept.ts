/**
 * What a summary kept, read back from it with the extractor compaction itself uses: the identifiers
 * and the decisions and instructions the next compaction carries forward from this summary.
 */
import { collectFacts } from './extractive-summary';
import type { IdentifierPolicy } from './identifiers';

/** The identifiers and the decisions (and instructions) a summary preserves. */
export interface SummaryKept {
  readonly identifiers: readonly string[];
  /** Each statement as the summary words it. */
  readonly decisions: readonly string[];
}

/**
 * What `summary` keeps, as a compaction merging it would read it (`collectFacts` of it as the
 * previous summary). `policy` is the identifier policy compactions run with: strict unless set.
 */
export function keptBySummary(summary: string, policy: IdentifierPolicy = 'strict'): SummaryKept {
  const facts = collectFacts(summary, [], policy);
  return {
    identifiers: facts.identifiers,
    decisions: facts.items.filter((i) => i.kind === 'decisions' || i.kind === 'instructions').map((i) => i.text),
  };
}
