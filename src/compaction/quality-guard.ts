/**
 * Summary quality guard: a summary must keep the identifiers of what it summarizes, and must fit
 * its cap without losing them. Keel's answer to summaries that silently lose everything.
 */
import { DEFAULTS } from '../config/defaults';
import { missingSections, type SectionFacts } from './summary-sections';

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
  const bullets = lines.map((l) => l.trim()).filter((l) => l.startsWith('- ')).map((l) => l.slice(2));
  return bullets.flatMap((b) => b.split(', ')).map((id) => id.trim()).filter((id) => id.length > 0);
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
 * Caps a summary at `maxChars` (OpenClaw: 16,000), cutting at a section boundary (or a line) and
 * marking the cut. The "Preserved identifiers" section is never cut: it moves to the end intact,
 * and when it alone exceeds the cap it is kept whole (the result is then longer than `maxChars`).
 * Returns the same string when it already fits.
 */
export function capSummary(text: string, maxChars: number = DEFAULTS.maxSummaryChars): string {
  if (text.length <= maxChars) return text;
  const section = findPreservedSection(text);
  const preserved = section ? text.slice(section[0], section[1]).trim() : '';
  const body = section ? `${text.slice(0, section[0])}${text.slice(section[1])}` : text;
  const marker = `[Summary cut to ${maxChars} characters]`;
  const budget = maxChars - marker.length - (preserved ? preserved.length + 2 : 0) - 1;
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
}

/**
 * The guard as one step, in the order the workflow applies it: check, add the sections (last
 * request, open tasks, decisions) the summary left out when `facts` has them, append the missing
 * identifiers, then cap (the cap never drops the appended identifiers).
 */
export function guardSummary(summary: string, sourceIdentifiers: readonly string[], maxChars: number = DEFAULTS.maxSummaryChars, facts?: SectionFacts): GuardedSummary {
  const quality = checkSummaryQuality(summary, sourceIdentifiers);
  // Added sections go first: the cap cuts from the end, and they are what the summarizer forgot.
  const added = quality.blank || !facts ? [] : missingSections(summary, facts);
  const withSections = added.length ? `${added.join('\n\n')}\n\n${summary}` : summary;
  const withIds = appendPreservedIdentifiers(withSections, quality.missing);
  return { summary: capSummary(withIds, maxChars), appended: quality.missing, blank: quality.blank, addedSections: added.map((s) => s.split('\n', 1)[0]) };
}
