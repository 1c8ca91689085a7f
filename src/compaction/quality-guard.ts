/**
 * Summary quality guard: a summary must keep the identifiers of what it summarizes and the
 * decisions and instructions people gave, and must fit its budget without losing them. Keel's
 * answer to summaries that silently lose everything.
 */
import { missingSections, unkeptStatements, type SectionFacts } from './summary-sections';
import { summaryCharBudget } from './summary-budget';
import { itemsWithin } from './summary-items';
import { leftOutCountIn, leftOutNote, newestIdentifiersWithin } from './identifier-budget';

/** The heading of the section that carries identifiers a summary would otherwise have lost. */
export const PRESERVED_IDENTIFIERS_HEADING = '## Preserved identifiers';

export interface SummaryQuality {
  /** True when the summary is not blank and keeps every source identifier. */
  readonly ok: boolean;
  /** Source identifiers not found verbatim in the summary, in source order. */
  readonly missing: string[];
  readonly blank: boolean;
}

/**
 * Checks that every identifier of the summarized text appears verbatim in the summary.
 *
 * @example checkSummaryQuality('moved /etc/hosts', ['/etc/hosts', '10.0.0.1']) // { ok: false, missing: ['10.0.0.1'], blank: false }
 */
export function checkSummaryQuality(summary: string, sourceIdentifiers: readonly string[]): SummaryQuality {
  const missing = sourceIdentifiers.filter((id) => !summary.includes(id));
  const blank = summary.trim().length === 0;
  return { ok: !blank && missing.length === 0, missing, blank };
}

/** Finds the preserved-identifiers section as `[start, end)`, up to the next `## ` heading. */
function findPreservedSection(text: string): [number, number] | undefined {
  const start = text.startsWith(PRESERVED_IDENTIFIERS_HEADING) ? 0 : text.indexOf(`\n${PRESERVED_IDENTIFIERS_HEADING}`);
  if (start < 0) return undefined;
  const from = start === 0 ? 0 : start + 1;
  const next = text.indexOf('\n## ', from + PRESERVED_IDENTIFIERS_HEADING.length);
  return [from, next < 0 ? text.length : next + 1];
}

/**
 * The identifiers listed in a summary's "Preserved identifiers" section (one per line, or comma
 * separated when listed compactly). They are protected again by the next compaction even when
 * their shape no longer says so (a quoted name is listed without its quotes).
 */
export function preservedIdentifiersOf(summary: string): string[] {
  const section = findPreservedSection(summary);
  if (!section) return [];
  const lines = summary.slice(section[0], section[1]).split('\n').slice(1);
  const bullets = lines
    .map((l) => l.trim())
    .filter((l) => l.startsWith('- '))
    .map((l) => l.slice(2));
  return bullets
    .flatMap((b) => b.split(', '))
    .map((id) => id.trim())
    .filter((id) => id.length > 0);
}

/**
 * Adds the missing identifiers to the summary's "Preserved identifiers" section (created at the end
 * when absent). Returns the same string when nothing is missing.
 */
export function appendPreservedIdentifiers(summary: string, missing: readonly string[]): string {
  const toAdd = [...new Set(missing)].filter((id) => id.length > 0);
  if (toAdd.length === 0) return summary;
  const lines = toAdd.map((id) => `- ${id}`).join('\n');
  const section = findPreservedSection(summary);
  if (!section) return `${summary.trimEnd()}\n\n${PRESERVED_IDENTIFIERS_HEADING}\n${lines}\n`;
  const [start, end] = section;
  const body = summary.slice(start, end).trimEnd();
  const rest = summary.slice(end);
  return `${summary.slice(0, start)}${body}\n${lines}\n${rest ? `\n${rest}` : ''}`;
}

/**
 * Bounds the "Preserved identifiers" section to `maxChars` of listing: the newest identifiers (the
 * end of the list) are kept, one per line, under a note of how many were left out (`leftOutBefore`
 * were left out before the section was written). A summary without the section gets one holding
 * only the note when something was left out.
 */
function boundPreservedSection(text: string, maxChars: number, leftOutBefore: number): string {
  const section = findPreservedSection(text);
  if (!section)
    return leftOutBefore > 0
      ? `${text.trimEnd()}\n\n${PRESERVED_IDENTIFIERS_HEADING}\n${leftOutNote(leftOutBefore)}\n`
      : text;
  const ids = [...new Set(preservedIdentifiersOf(text))];
  const bounded = newestIdentifiersWithin(ids, maxChars);
  if (bounded.leftOut === 0 && leftOutBefore === 0) return text;
  // A note already in the section (written by an earlier bound) counts too.
  const leftOut = bounded.leftOut + leftOutBefore + leftOutCountIn(text.slice(section[0], section[1]));
  const list = bounded.kept.map((id) => `- ${id}\n`).join('');
  const rebuilt = `${PRESERVED_IDENTIFIERS_HEADING}\n${leftOut > 0 ? `${leftOutNote(leftOut)}\n` : ''}${list}`;
  const rest = text.slice(section[1]);
  return `${text.slice(0, section[0])}${rebuilt}${rest ? `\n${rest}` : ''}`;
}

/**
 * Caps a summary at `maxChars` (default: the default window's `summaryCharBudget`), cutting at a section boundary (or a line) and
 * marking the cut. The "Preserved identifiers" section is not cut with the text: it moves to the end
 * intact, and the text gets what room is left. With a finite `maxIdentifierChars` the section keeps
 * only its newest identifiers past that size, and the text keeps at least half of `maxChars` (the
 * summary is then at most about `maxChars / 2 + maxIdentifierChars` long, heading and note aside).
 * Without it, a section that alone exceeds the cap is kept whole and the text goes. Returns the same
 * string when it fits.
 */
export function capSummary(
  summary: string,
  maxChars: number = summaryCharBudget(),
  maxIdentifierChars = Infinity,
): string {
  const text = Number.isFinite(maxIdentifierChars) ? boundPreservedSection(summary, maxIdentifierChars, 0) : summary;
  if (text.length <= maxChars) return text;
  const section = findPreservedSection(text);
  const preserved = section ? text.slice(section[0], section[1]).trim() : '';
  const body = section ? `${text.slice(0, section[0])}${text.slice(section[1])}` : text;
  const marker = `[Summary cut to ${maxChars} characters]`;
  // A bounded identifier list may be long; it never takes more than half the text's room.
  const proseFloor = Number.isFinite(maxIdentifierChars) ? Math.floor(maxChars / 2) : 0;
  const budget = Math.max(maxChars - (preserved ? preserved.length + 2 : 0), proseFloor) - marker.length - 1;
  if (budget <= 0) return preserved ? `${marker}\n\n${preserved}` : marker;
  let cutAt = body.lastIndexOf('\n## ', budget);
  if (cutAt < budget / 2) cutAt = body.lastIndexOf('\n', budget);
  if (cutAt <= 0) cutAt = budget;
  const kept = `${body.slice(0, cutAt).trimEnd()}\n${marker}`;
  return preserved ? `${kept}\n\n${preserved}` : kept;
}

/** What `guardSummary` did. */
export interface GuardedSummary {
  readonly summary: string;
  /** Identifiers the summarizer lost and the guard appended. */
  readonly appended: string[];
  /** The summary was blank: the caller must not record it (fall back to the extractive summary). */
  readonly blank: boolean;
  /** Headings of sections the summarizer left out and the guard added from the conversation's facts. */
  readonly addedSections: string[];
  /**
   * Decisions and instructions (`[time] speaker: statement`) the summarizer did not quote, before the
   * guard added them: what the one summarizer retry is asked to restore.
   */
  readonly unkept: string[];
}

/**
 * The guard as one step, in the order the workflow applies it: check, add the sections (last
 * request, decisions, instructions, open tasks, people, errors) the summary left out when `facts`
 * has them and quote, with their times, the decisions and instructions it did not keep; append the
 * missing identifiers, then cap (the cap never drops the appended identifiers). Only the newest
 * source identifiers that fit `maxIdentifierChars` are required; the summary says how many older
 * ones were left out.
 */
export function guardSummary(
  summary: string,
  sourceIdentifiers: readonly string[],
  maxChars: number = summaryCharBudget(),
  facts?: SectionFacts,
  maxIdentifierChars = Infinity,
): GuardedSummary {
  const required = newestIdentifiersWithin(sourceIdentifiers, maxIdentifierChars);
  const quality = checkSummaryQuality(summary, required.kept);
  // Added sections go first: the cap cuts from the end, and they are what the summarizer forgot.
  // They take at most half the budget (decisions and instructions last to go), so the summary's own text stays.
  const bounded = facts ? { ...facts, items: itemsWithin(facts.items, Math.floor(maxChars / 2)) } : undefined;
  const added = quality.blank || !bounded ? [] : missingSections(summary, bounded);
  const withSections = added.length ? `${added.join('\n\n')}\n\n${summary}` : summary;
  const withIds = appendPreservedIdentifiers(withSections, quality.missing);
  const noted = required.leftOut > 0 ? boundPreservedSection(withIds, maxIdentifierChars, required.leftOut) : withIds;
  const unkept = quality.blank || !bounded ? [] : unkeptStatements(summary, bounded.items);
  return {
    summary: capSummary(noted, maxChars, maxIdentifierChars),
    appended: quality.missing,
    blank: quality.blank,
    addedSections: added.map((s) => s.split('\n', 1)[0]),
    unkept,
  };
}
