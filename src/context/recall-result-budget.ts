import { textTokens } from './history-pages';

/** One hit of a recall tool's result, rendered: in full, and without what is shown beside it. */
export interface RenderedHit {
  readonly full: string;
  /** The hit alone (no question or answer beside it); absent when `full` is the hit alone. */
  readonly alone?: string;
}

/** The hits a result shows, and how many were left out for the budget. */
export interface BudgetedHits {
  readonly texts: string[];
  readonly leftOut: number;
  readonly tokens: number;
}

/**
 * The hits that fit `budgetTokens`, best first: each in full if it fits, else alone, else left out
 * so a shorter, lower-ranked hit may take its place. The first hit is always shown (cut to the budget
 * when it alone is larger), so a result never comes back empty when something matched.
 *
 * @example
 *   fitHits([{ full: 'a'.repeat(40) }, { full: 'b'.repeat(400), alone: 'b'.repeat(20) }], 20)
 *   // → { texts: ['aaaa…', 'bbbb…'], leftOut: 0, tokens: 15 } (the second shown alone)
 */
export function fitHits(hits: readonly RenderedHit[], budgetTokens: number): BudgetedHits {
  const texts: string[] = [];
  let tokens = 0;
  let leftOut = 0;
  for (const hit of hits) {
    const choice = [hit.full, hit.alone].find((t) => t !== undefined && tokens + textTokens(t) <= budgetTokens);
    if (choice !== undefined) {
      texts.push(choice);
      tokens += textTokens(choice);
    } else if (texts.length === 0) {
      const cut = `${(hit.alone ?? hit.full).slice(0, budgetTokens * 4 - 1)}…`;
      texts.push(cut);
      tokens += textTokens(cut);
    } else leftOut++;
  }
  return { texts, leftOut, tokens };
}

/** The line a result ends with when hits were left out: the guard, its figures and what to do instead. */
export function leftOutNote(leftOut: number, budgetTokens: number, tool: string): string {
  if (leftOut === 0) return '';
  return `\n[${leftOut} more ${leftOut === 1 ? 'match' : 'matches'} left out: ${tool} results are kept within ${budgetTokens} tokens (recallResultTokens); search with more specific words to see them]`;
}
