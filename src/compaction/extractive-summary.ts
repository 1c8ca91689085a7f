/**
 * The deterministic, model-free summary Keel writes when every summarizer attempt failed, instead
 * of "No prior history.": the last request, then what people said that must outlive the messages —
 * decisions, instructions and preferences, open tasks and commitments, people and their roles,
 * errors and their causes — each quoted with its speaker and time, and the protected identifiers.
 * Stacked compactions carry the previous summary's items forward with their times; over budget,
 * older low-value items go first and decisions and instructions last.
 */
import type { AgentMessage } from '../context/types';
import type { IdentifierPolicy } from './identifiers';
import { sourceIdentifiers } from './message-identifiers';
import { PRESERVED_IDENTIFIERS_HEADING } from './quality-guard';
import { leftOutNote, newestIdentifiersWithin } from './identifier-budget';
import {
  ITEM_SECTIONS,
  itemSection,
  KEPT_VERBATIM_HEADING,
  SUMMARY_SECTIONS,
  type SectionFacts,
} from './summary-sections';
import { messageText } from './serialize-for-summary';
import { statementKind, statementsOf, type Speaker, type StatementKind } from './statement-kinds';
import { itemChars, ItemSet, itemsWithin, itemValue, parseItem, type SummaryItem } from './summary-items';
import { summaryCharBudget } from './summary-budget';

/**
 * First line of every extractive summary, so readers (and the next compaction) know what it is.
 * Unchanged since the first version: a recorded compaction is known to be degraded by it.
 */
export const EXTRACTIVE_SUMMARY_HEADER =
  '[Degraded extractive summary: written without a model because summarization failed; facts are quoted, not interpreted.]';
/** The line after the header: what an item's time means. */
const TIMES_NOTE = '[Statements are quoted as "[time] speaker: words"; times are UTC.]';

/** The last user request is quoted up to this many characters (a pasted log should not fill the summary). */
const MAX_REQUEST_CHARS = 2_000;
/** A request shortened further when the summary does not fit. */
const MIN_REQUEST_CHARS = 400;
/** Low-value items kept at most (by `itemValue`), the newest, however large the budget: a summary is not a log. */
const MAX_ITEMS_OF_VALUE: ReadonlyMap<number, number> = new Map([
  [0, 20],
  [1, 40],
]);

const SUMMARIZED_HEADING = '## Summarized';
const SECTION_OF_HEADING = new Map<string, StatementKind>(ITEM_SECTIONS.map((k) => [SUMMARY_SECTIONS[k], k]));
/** Our sections that hold no items. */
const OTHER_HEADINGS = new Set([SUMMARY_SECTIONS.request, SUMMARIZED_HEADING, PRESERVED_IDENTIFIERS_HEADING]);

export interface ExtractiveSummaryInput {
  readonly previousSummary?: string | undefined;
  readonly messages: readonly AgentMessage[];
  readonly policy: IdentifierPolicy;
  /** Cap; default: the budget of the default window (`summaryCharBudget`). Identifiers may exceed it, and then it says so. */
  readonly maxChars?: number | undefined;
  /**
   * The identifier listing's own bound (`identifierCharBudget` of the window): past it only the
   * newest identifiers are listed, with a note, and the other sections keep at least half the cap.
   * Unbounded when absent.
   */
  readonly maxIdentifierChars?: number | undefined;
}

/** Splits a summary into `## ` sections: heading → body. Text before the first heading is under ''. */
function sections(summary: string): Map<string, string> {
  const map = new Map<string, string>();
  let heading = '';
  let body: string[] = [];
  for (const line of summary.split('\n')) {
    if (line.startsWith('## ')) {
      map.set(heading, body.join('\n'));
      heading = line.trim();
      body = [];
    } else body.push(line);
  }
  map.set(heading, body.join('\n'));
  return map;
}

function bullets(body: string | undefined): string[] {
  return (body ?? '')
    .split('\n')
    .map((l) => l.replace(/^-\s+/, '').trim())
    .filter((l) => l.length > 0 && !l.startsWith('('));
}

interface Totals {
  messages: number;
  compactions: number;
}

function previousTotals(summarized: string | undefined, hasPrevious: boolean): Totals {
  const m = /In total: (\d+) messages over (\d+) compactions?/.exec(summarized ?? '');
  if (m) return { messages: Number(m[1]), compactions: Number(m[2]) };
  return { messages: 0, compactions: hasPrevious ? 1 : 0 };
}

/**
 * Writes the extractive summary of `previousSummary` + `messages`.
 *
 * Contents: a first line saying it is degraded; the last user request verbatim (clipped at 2,000
 * chars); the item sections (see `collectFacts`), each item `[time] speaker: statement`; counts of
 * what was summarized; the protected identifiers of the messages and of the previous summary (the
 * newest within `maxIdentifierChars`, saying how many older ones were left out). To fit `maxChars`
 * it drops the oldest items of the lowest value first (`itemValue`: errors, tasks, people and
 * deadlines, then decisions and instructions), then clips the request; listed identifiers are never
 * dropped: when they alone exceed the cap they are listed compactly and the summary says so.
 */
export function extractiveSummary(input: ExtractiveSummaryInput): string {
  const maxChars = input.maxChars ?? summaryCharBudget();
  const facts = collectFacts(input.previousSummary, input.messages, input.policy);
  const previous = input.previousSummary?.trim() ? sections(input.previousSummary) : undefined;
  const counts = { user: 0, assistant: 0, toolResult: 0 };
  for (const message of input.messages) counts[message.role]++;

  const before = previousTotals(previous?.get(SUMMARIZED_HEADING), previous !== undefined);
  const total = input.messages.length;
  const summarized =
    `${SUMMARIZED_HEADING}\n` +
    `- This compaction: ${total} messages (${counts.user} user, ${counts.assistant} assistant, ${counts.toolResult} tool results).\n` +
    `- In total: ${before.messages + total} messages over ${before.compactions + 1} compactions.`;

  const identifiers = newestIdentifiersWithin(facts.identifiers, input.maxIdentifierChars ?? Infinity);
  return fit({
    lastRequest: facts.lastRequest,
    items: [...facts.items],
    identifiers: identifiers.kept,
    leftOut: identifiers.leftOut,
    bounded: input.maxIdentifierChars !== undefined,
    summarized,
    maxChars,
  });
}

/** What a summary of a previous summary plus new messages must carry, found without a model. */
export interface ConversationFacts extends SectionFacts {
  readonly identifiers: readonly string[];
}

/** The speaker an item names: a tool result's tool, or the role. */
function speakerOf(message: AgentMessage): string {
  return message.role === 'toolResult' ? `tool ${message.toolName}` : message.role;
}

/** Adds the statements of `text` said by `speaker` (a done line closes its task instead). */
function scan(into: ItemSet, text: string, speaker: Speaker, said: { time?: number; speaker?: string }): void {
  for (const statement of statementsOf(text)) {
    if (into.close(statement)) continue;
    const kind = statementKind(statement, speaker);
    if (kind) into.add({ kind, text: statement, ...said });
  }
}

/** The first line of a failed tool call's output: the error, in the tool's own words. */
function toolError(message: AgentMessage): string | undefined {
  if (message.role !== 'toolResult' || !message.isError) return undefined;
  return messageText(message)
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
}

/** Items of a previous summary: ours carry their section; a model's lines are classified like speech. */
function carryForward(into: ItemSet, previous: Map<string, string>): void {
  for (const [heading, body] of previous) {
    if (OTHER_HEADINGS.has(heading)) continue;
    const section = SECTION_OF_HEADING.get(heading);
    if (section) {
      for (const line of bullets(body)) into.add(parseItem(line, section));
      continue;
    }
    if (heading === KEPT_VERBATIM_HEADING) {
      // What the guard quoted into a model summary stays a decision or an instruction, whatever its words.
      for (const item of bullets(body).map((line) => parseItem(line, 'decisions')))
        into.add({
          ...item,
          kind: statementKind(item.text, 'summary') === 'instructions' ? 'instructions' : 'decisions',
        });
      continue;
    }
    for (const line of body.split('\n')) {
      // Bracketed notes (this summary's header, a cut marker) are not statements.
      if (/^\s*\[.*\]\s*$/.test(line)) continue;
      const item = parseItem(line.replace(/^\s*-\s+/, ''), 'decisions');
      scan(into, item.text, 'summary', {
        ...(item.time !== undefined ? { time: item.time } : {}),
        ...(item.speaker ? { speaker: item.speaker } : {}),
      });
    }
  }
}

/**
 * The facts of `previousSummary` + `messages`: the last user request, the items (decisions;
 * instructions and preferences; open tasks, requests, commitments and deadlines, done ones closed;
 * people and roles; errors and their causes) with speaker and time — at most 20 tool errors and
 * plain requests and 40 other tasks, the newest — and the protected identifiers. The extractive
 * summary is written from them; the quality guard checks a model summary against them.
 */
export function collectFacts(
  previousSummary: string | undefined,
  messages: readonly AgentMessage[],
  policy: IdentifierPolicy,
): ConversationFacts {
  const items = new ItemSet();
  const previous = previousSummary?.trim() ? sections(previousSummary) : undefined;
  let lastRequest = previous?.get(SUMMARY_SECTIONS.request)?.trim() ?? '';
  if (previous) carryForward(items, previous);

  for (const message of messages) {
    const said = {
      ...(message.timestamp !== undefined ? { time: message.timestamp } : {}),
      speaker: speakerOf(message),
    };
    if (message.role === 'user') {
      const text = messageText(message);
      if (text.trim()) lastRequest = text.trim();
      scan(items, text, 'user', said);
    } else if (message.role === 'assistant') {
      // Tool-call arguments are not the assistant's words; scan only its text blocks.
      scan(items, message.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'), 'assistant', said);
    } else {
      const error = toolError(message);
      if (error) items.add({ kind: 'errors', text: error, ...said });
    }
  }
  // One definition of what must be kept: the quality guard checks a model summary against the same list.
  const identifiers = sourceIdentifiers(previousSummary, messages, policy);
  return { lastRequest, items: capLowValue(items.values()), identifiers };
}

/** Keeps at most `MAX_ITEMS_OF_VALUE` of each low value, the newest. */
function capLowValue(items: readonly SummaryItem[]): SummaryItem[] {
  const left = new Map(MAX_ITEMS_OF_VALUE);
  const kept: SummaryItem[] = [];
  for (let i = items.length - 1; i >= 0; i--) {
    const value = itemValue(items[i]!);
    const n = left.get(value);
    if (n === 0) continue;
    if (n !== undefined) left.set(value, n - 1);
    kept.push(items[i]!);
  }
  return kept.reverse();
}

interface Parts {
  lastRequest: string;
  items: SummaryItem[];
  identifiers: string[];
  /** Older identifiers not listed (over the identifier bound). */
  leftOut: number;
  /** The identifier listing has its own bound: the other sections keep at least half the cap. */
  bounded: boolean;
  summarized: string;
  maxChars: number;
}

function identifierSection(p: Parts, compact: boolean): string {
  if (!p.identifiers.length && !p.leftOut) return '';
  const list = compact ? `- ${p.identifiers.join(', ')}` : p.identifiers.map((id) => `- ${id}`).join('\n');
  const compactNote = compact
    ? `(${p.identifiers.length} identifiers exceed the ${p.maxChars}-char cap on their own; listed compactly, other sections dropped)\n`
    : '';
  const leftOut = p.leftOut ? `${leftOutNote(p.leftOut)}\n` : '';
  return `${PRESERVED_IDENTIFIERS_HEADING}\n${leftOut}${compactNote}${list}`;
}

function render(p: Parts, items: readonly SummaryItem[], requestChars: number, compactIdentifiers: boolean): string {
  const out = [`${EXTRACTIVE_SUMMARY_HEADER}\n${TIMES_NOTE}`];
  if (p.lastRequest && requestChars > 0) out.push(`${SUMMARY_SECTIONS.request}\n${clip(p.lastRequest, requestChars)}`);
  for (const kind of ITEM_SECTIONS) {
    const of = items.filter((i) => i.kind === kind);
    if (of.length) out.push(itemSection(SUMMARY_SECTIONS[kind], of));
  }
  out.push(p.summarized);
  const ids = identifierSection(p, compactIdentifiers);
  if (ids) out.push(ids);
  return out.join('\n\n');
}

function clip(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
}

/** Drops the oldest items of the lowest value, then clips the request, until the text fits. */
function fit(p: Parts): string {
  // A bounded identifier listing may be long; the other sections keep at least half the cap beside it.
  const limit = p.bounded
    ? Math.max(p.maxChars, Math.floor(p.maxChars / 2) + identifierSection(p, false).length)
    : p.maxChars;
  let kept: readonly SummaryItem[] = p.items;
  let text = render(p, kept, MAX_REQUEST_CHARS, false);
  // Each pass leaves out at least one item; a section left empty frees its heading too.
  while (text.length > limit && kept.length > 0) {
    kept = itemsWithin(kept, itemChars(kept) - (text.length - limit));
    text = render(p, kept, MAX_REQUEST_CHARS, false);
  }
  if (text.length > limit) text = render(p, kept, MIN_REQUEST_CHARS, false);
  if (text.length > limit) text = render({ ...p, lastRequest: '' }, [], 0, true);
  return text;
}
