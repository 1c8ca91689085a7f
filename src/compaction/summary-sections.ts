/**
 * The sections every summary must have when the conversation gave them content: the last request,
 * decisions, instructions and preferences, open tasks, people and errors. The extractive summary
 * writes them; the model is asked for them; the quality guard adds the ones a model summary left
 * out, and quotes the decisions and instructions it lost, from facts found without a model.
 */
import type { StatementKind } from './statement-kinds';
import { normalizedWords, renderItem, type SummaryItem } from './summary-items';

/** Section headings, in summary order after the last request. */
export const SUMMARY_SECTIONS = {
  request: '## Last user request',
  decisions: '## Decisions',
  instructions: '## Instructions and preferences',
  tasks: '## Open tasks',
  people: '## People and roles',
  errors: '## Errors and causes',
} as const;

/** The item sections in summary order. */
export const ITEM_SECTIONS: readonly StatementKind[] = ['decisions', 'instructions', 'tasks', 'people', 'errors'];

/** Decisions and instructions a model summary left out, quoted by the guard with their times. */
export const KEPT_VERBATIM_HEADING = '## Decisions and instructions (verbatim)';

/** What the guard can fill a missing section from (see collectFacts). */
export interface SectionFacts {
  readonly lastRequest: string;
  readonly items: readonly SummaryItem[];
}

/** A summary has a section when a heading line names it (any level, any case: models vary the markup). */
const PRESENT: Record<keyof typeof SUMMARY_SECTIONS, RegExp> = {
  request: /^#{1,4}\s*(?:\*\*)?(?:last|latest|most recent) (?:user )?request/im,
  decisions: /^#{1,4}\s*(?:\*\*)?(?:key )?decisions/im,
  instructions: /^#{1,4}\s*(?:\*\*)?(?:instructions|preferences|constraints|rules)/im,
  tasks: /^#{1,4}\s*(?:\*\*)?(?:open tasks|open questions|open requests|todos?\b|next steps|pending|commitments)/im,
  people: /^#{1,4}\s*(?:\*\*)?(?:people|who'?s who|contacts|stakeholders|team)/im,
  errors: /^#{1,4}\s*(?:\*\*)?(?:errors|issues|problems|failures|incidents)/im,
};

/** A section of items, rendered (`## Heading` and one bullet per item). */
export function itemSection(heading: string, items: readonly SummaryItem[]): string {
  return `${heading}\n${items.map((i) => `- ${renderItem(i)}`).join('\n')}`;
}

/**
 * The decisions and instructions of `items` that `summary` does not quote (compared by their words,
 * so case and punctuation do not count), rendered with their times: what the guard asks the
 * summarizer to restore, and appends when it does not.
 */
export function unkeptStatements(summary: string, items: readonly SummaryItem[]): string[] {
  const words = ` ${normalizedWords(summary)} `;
  return items
    .filter(
      (i) => (i.kind === 'decisions' || i.kind === 'instructions') && !words.includes(` ${normalizedWords(i.text)} `),
    )
    .map(renderItem);
}

/**
 * The sections `summary` lacks although `facts` has content for them, rendered, in summary order,
 * then the decisions and instructions of sections it has but that it does not quote.
 */
export function missingSections(summary: string, facts: SectionFacts): string[] {
  const out: string[] = [];
  if (facts.lastRequest && !PRESENT.request.test(summary))
    out.push(`${SUMMARY_SECTIONS.request}\n${facts.lastRequest.slice(0, 2_000)}`);
  const added = new Set<StatementKind>();
  for (const kind of ITEM_SECTIONS) {
    const items = facts.items.filter((i) => i.kind === kind);
    if (items.length && !PRESENT[kind].test(summary)) {
      out.push(itemSection(SUMMARY_SECTIONS[kind], items));
      added.add(kind);
    }
  }
  const unkept = unkeptStatements(
    summary,
    facts.items.filter((i) => !added.has(i.kind)),
  );
  if (unkept.length) out.push(`${KEPT_VERBATIM_HEADING}\n${unkept.map((line) => `- ${line}`).join('\n')}`);
  return out;
}
