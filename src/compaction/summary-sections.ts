/**
 * The sections every summary must have when the conversation gave them content: the last request,
 * open tasks and decisions. The extractive summary writes them; the model is asked for them; the
 * quality guard adds the ones a model summary left out, from facts found without a model.
 */

export const SUMMARY_SECTIONS = {
  request: '## Last user request',
  tasks: '## Open tasks',
  decisions: '## Decisions',
} as const;

/** Asked-to-remember decisions a model summary paraphrased or dropped, quoted by the guard. */
const REMEMBERED_HEADING = '## Decisions the user asked to remember (verbatim)';

/** What the guard can fill a missing section from (see collectFacts). */
export interface SectionFacts {
  readonly lastRequest: string;
  readonly tasks: readonly string[];
  readonly decisions: readonly string[];
}

/** A summary has a section when a heading line names it (any level, any case: models vary the markup). */
const PRESENT: Record<keyof typeof SUMMARY_SECTIONS, RegExp> = {
  request: /^#{1,4}\s*(?:\*\*)?(?:last|latest|most recent) (?:user )?request/im,
  tasks: /^#{1,4}\s*(?:\*\*)?(?:open tasks|open questions|todos?\b|next steps|pending)/im,
  decisions: /^#{1,4}\s*(?:\*\*)?(?:key )?decisions/im,
};

/**
 * The sections `summary` lacks although `facts` has content for them, rendered, in summary order.
 * A decision line someone asked to be remembered is also added when the summary has a Decisions
 * section but does not quote it: that is the fact users notice losing.
 */
export function missingSections(summary: string, facts: SectionFacts): string[] {
  const out: string[] = [];
  if (facts.lastRequest && !PRESENT.request.test(summary)) out.push(`${SUMMARY_SECTIONS.request}\n${facts.lastRequest.slice(0, 2_000)}`);
  if (facts.tasks.length && !PRESENT.tasks.test(summary)) out.push(`${SUMMARY_SECTIONS.tasks}\n${facts.tasks.map((t) => `- ${t}`).join('\n')}`);
  if (!PRESENT.decisions.test(summary)) {
    if (facts.decisions.length) out.push(`${SUMMARY_SECTIONS.decisions}\n${facts.decisions.map((d) => `- ${d}`).join('\n')}`);
  } else {
    const unquoted = facts.decisions.filter((d) => /\bremember\b|\bforget\b/i.test(d) && !summary.includes(d));
    if (unquoted.length) out.push(`${REMEMBERED_HEADING}\n${unquoted.map((d) => `- ${d}`).join('\n')}`);
  }
  return out;
}
