/**
 * The deterministic, model-free summary Keel writes when every summarizer attempt failed, instead
 * of "No prior history.": the last request, open tasks, decisions and the protected identifiers.
 * It re-distils like a model summary does: the previous summary's facts are merged with the new
 * messages' facts, so stacked compactions stay bounded.
 */
import { DEFAULTS } from '../config/defaults';
import type { AgentMessage } from '../context/types';
import type { IdentifierPolicy } from './identifiers';
import { sourceIdentifiers } from './message-identifiers';
import { PRESERVED_IDENTIFIERS_HEADING } from './quality-guard';
import { leftOutNote, newestIdentifiersWithin } from './identifier-budget';
import { SUMMARY_SECTIONS } from './summary-sections';
import { messageText } from './serialize-for-summary';

/** First line of every extractive summary, so readers (and the next compaction) know what it is. */
export const EXTRACTIVE_SUMMARY_HEADER =
  '[Degraded extractive summary: written without a model because summarization failed; facts are quoted, not interpreted.]';

/** The last user request is quoted up to this many characters (a pasted log should not fill the summary). */
const MAX_REQUEST_CHARS = 2_000;
/** A request shortened further when the summary does not fit. */
const MIN_REQUEST_CHARS = 400;
/** One task or decision line at most this long. */
const MAX_ITEM_CHARS = 240;
/** Tasks and decisions tracked while scanning; older ones fall off first. */
const MAX_TRACKED_ITEMS = 60;

const HEADINGS = { ...SUMMARY_SECTIONS, summarized: '## Summarized' } as const;

const TASK_PATTERNS = [/^[-*]?\s*\[ \]\s+(.+)$/, /\bTODO\b[:\s-]*(.+)$/, /^(?:[-*]\s*)?next\s*:\s*(.+)$/i];
/** "I will…" promises; "I will not…" is a refusal, not a task. */
const PROMISE_PATTERN = /\bI(?:'ll| will)\s+(?!not\b)(.+)$/;
const DONE_PATTERNS = [/^[-*]?\s*\[x\]\s+(.+)$/i, /\b(?:DONE|[Dd]one|[Cc]ompleted|[Ff]ixed|[Ff]inished)\s*:\s*(.+)$/];
const DECISION_PATTERN =
  /\b(?:decided|decision:|we'll use|we will use|let's go with|let's use|going with|we chose|settled on|agreed to|agreed on|remember (?:that|this)|please remember|don't forget|do not forget|keep in mind|for the record|from now on)\b|\bremember\s*:/i;

export interface ExtractiveSummaryInput {
  readonly previousSummary?: string;
  readonly messages: readonly AgentMessage[];
  readonly policy: IdentifierPolicy;
  /** Cap (default 16,000, OpenClaw's summary cap); identifiers may exceed it, and then it says so. */
  readonly maxChars?: number;
  /**
   * The identifier listing's own bound (`identifierCharBudget` of the window): past it only the
   * newest identifiers are listed, with a note, and the other sections keep at least half the cap.
   * Unbounded when absent.
   */
  readonly maxIdentifierChars?: number;
}

/** Lowercased words only: the key that matches a task to its later "done" line. */
function taskKey(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim().slice(0, 80);
}

function clip(text: string, max: number): string {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
}

/** Sentences of each line: a decision or a promise often sits mid-paragraph. */
function statements(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const l = line.trim();
    if (l) out.push(...l.split(/(?<=[.!?])\s+(?=[A-Z])/));
  }
  return out;
}

/** Ordered, bounded set of items keyed for de-duplication; re-adding moves an item to the newest end. */
class ItemList {
  private readonly items = new Map<string, string>();
  add(key: string, text: string): void {
    if (!key) return;
    this.items.delete(key);
    this.items.set(key, clip(text, MAX_ITEM_CHARS));
    if (this.items.size > MAX_TRACKED_ITEMS) this.items.delete(this.items.keys().next().value as string);
  }
  close(doneKey: string): void {
    if (doneKey.length < 4) return;
    for (const key of [...this.items.keys()]) {
      if (key === doneKey || key.includes(doneKey) || doneKey.includes(key)) this.items.delete(key);
    }
  }
  values(): string[] {
    return [...this.items.values()];
  }
}

/** The part of a task statement that names the work (the key a later "done" line matches). */
function taskBody(statement: string, allowPromises: boolean): string | undefined {
  const m = TASK_PATTERNS.map((p) => p.exec(statement)).find((x) => x) ?? (allowPromises ? PROMISE_PATTERN.exec(statement) : null);
  return m ? m[1] : undefined;
}

class FactCollector {
  readonly tasks = new ItemList();
  readonly decisions = new ItemList();

  scan(text: string, allowPromises: boolean): void {
    for (const s of statements(text)) {
      const done = DONE_PATTERNS.map((p) => p.exec(s)).find((m) => m);
      if (done) {
        this.tasks.close(taskKey(done[1]));
        continue;
      }
      const body = taskBody(s, allowPromises);
      if (body !== undefined) this.tasks.add(taskKey(body), s.replace(/^[-*]\s+(?!\[)/, ''));
      if (DECISION_PATTERN.test(s)) this.decisions.add(taskKey(s), s.replace(/^[-*]\s+/, ''));
    }
  }
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
  return (body ?? '').split('\n').map((l) => l.replace(/^-\s+/, '').trim()).filter((l) => l.length > 0 && !l.startsWith('('));
}

interface Totals { messages: number; compactions: number }

function previousTotals(summarized: string | undefined, hasPrevious: boolean): Totals {
  const m = /In total: (\d+) messages over (\d+) compactions?/.exec(summarized ?? '');
  if (m) return { messages: Number(m[1]), compactions: Number(m[2]) };
  return { messages: 0, compactions: hasPrevious ? 1 : 0 };
}

/**
 * Writes the extractive summary of `previousSummary` + `messages`.
 *
 * Contents: a first line saying it is degraded; the last user request verbatim (clipped at 2,000
 * chars); open tasks (TODO, `next:`, unchecked boxes, "I will…" promises not later marked done);
 * decisions; counts of what was summarized; the protected identifiers of the messages and of the
 * previous summary (the newest within `maxIdentifierChars`, saying how many older ones were left
 * out). To fit `maxChars` it drops older decisions first, then older tasks, then clips the request;
 * listed identifiers are never dropped: when they alone exceed the cap they are listed compactly and
 * the summary says so.
 */
export function extractiveSummary(input: ExtractiveSummaryInput): string {
  const maxChars = input.maxChars ?? DEFAULTS.maxSummaryChars;
  const facts = collectFacts(input.previousSummary, input.messages, input.policy);
  const previous = input.previousSummary?.trim() ? sections(input.previousSummary) : undefined;
  const counts = { user: 0, assistant: 0, toolResult: 0 };
  for (const message of input.messages) counts[message.role]++;

  const before = previousTotals(previous?.get(HEADINGS.summarized), previous !== undefined);
  const total = input.messages.length;
  const summarized =
    `${HEADINGS.summarized}\n` +
    `- This compaction: ${total} messages (${counts.user} user, ${counts.assistant} assistant, ${counts.toolResult} tool results).\n` +
    `- In total: ${before.messages + total} messages over ${before.compactions + 1} compactions.`;

  const identifiers = newestIdentifiersWithin(facts.identifiers, input.maxIdentifierChars ?? Infinity);
  return fit({ ...facts, tasks: [...facts.tasks], decisions: [...facts.decisions], identifiers: identifiers.kept, leftOut: identifiers.leftOut, bounded: input.maxIdentifierChars !== undefined, summarized, maxChars });
}

/** What a summary of a previous summary plus new messages must carry, found without a model. */
export interface ConversationFacts {
  readonly lastRequest: string;
  readonly tasks: readonly string[];
  readonly decisions: readonly string[];
  readonly identifiers: readonly string[];
}

/**
 * The facts of `previousSummary` + `messages`: the last user request, open tasks (done ones closed),
 * decisions (including what someone asked to be remembered) and protected identifiers. The
 * extractive summary is written from them; the quality guard checks a model summary against them.
 */
export function collectFacts(previousSummary: string | undefined, messages: readonly AgentMessage[], policy: IdentifierPolicy): ConversationFacts {
  const facts = new FactCollector();
  const previous = previousSummary?.trim() ? sections(previousSummary) : undefined;

  let lastRequest = previous?.get(HEADINGS.request)?.trim() ?? '';
  if (previous) {
    for (const [heading, body] of previous) {
      if (heading === PRESERVED_IDENTIFIERS_HEADING) {
        // Its identifiers are read by sourceIdentifiers, with the rest of the summary's.
      } else if (heading === HEADINGS.tasks) {
        for (const b of bullets(body)) facts.tasks.add(taskKey(taskBody(b, true) ?? b), b);
      } else if (heading === HEADINGS.decisions) {
        for (const b of bullets(body)) facts.decisions.add(taskKey(b), b);
      } else if (heading !== HEADINGS.summarized && heading !== HEADINGS.request) {
        // A model-written summary: its lines are classified like conversation text.
        facts.scan(body, true);
      }
    }
  }

  for (const message of messages) {
    const text = messageText(message);
    if (message.role === 'user') {
      if (text.trim()) lastRequest = text.trim();
      facts.scan(text, false);
    } else if (message.role === 'assistant') {
      // Tool-call arguments are not the assistant's words; scan only its text blocks.
      facts.scan(message.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'), true);
    }
  }
  // One definition of what must be kept: the quality guard checks a model summary against the same list.
  const identifiers = sourceIdentifiers(previousSummary, messages, policy);
  return { lastRequest, tasks: facts.tasks.values(), decisions: facts.decisions.values(), identifiers };
}

interface Parts {
  lastRequest: string;
  tasks: string[];
  decisions: string[];
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

function render(p: Parts, requestChars: number, compactIdentifiers: boolean): string {
  const out = [EXTRACTIVE_SUMMARY_HEADER];
  if (p.lastRequest) out.push(`${HEADINGS.request}\n${clip(p.lastRequest, requestChars)}`);
  if (p.tasks.length) out.push(`${HEADINGS.tasks}\n${p.tasks.map((t) => `- ${t}`).join('\n')}`);
  if (p.decisions.length) out.push(`${HEADINGS.decisions}\n${p.decisions.map((d) => `- ${d}`).join('\n')}`);
  out.push(p.summarized);
  const ids = identifierSection(p, compactIdentifiers);
  if (ids) out.push(ids);
  return out.join('\n\n');
}

/** Drops older decisions, then older tasks, then clips the request, until the text fits. */
function fit(parts: Parts): string {
  const p = { ...parts, tasks: [...parts.tasks], decisions: [...parts.decisions] };
  // A bounded identifier listing may be long; the other sections keep at least half the cap beside it.
  const limit = p.bounded ? Math.max(p.maxChars, Math.floor(p.maxChars / 2) + identifierSection(p, false).length) : p.maxChars;
  let text = render(p, MAX_REQUEST_CHARS, false);
  while (text.length > limit && p.decisions.length > 0) {
    p.decisions.shift();
    text = render(p, MAX_REQUEST_CHARS, false);
  }
  while (text.length > limit && p.tasks.length > 0) {
    p.tasks.shift();
    text = render(p, MAX_REQUEST_CHARS, false);
  }
  if (text.length > limit) text = render(p, MIN_REQUEST_CHARS, false);
  if (text.length > limit) text = render({ ...p, lastRequest: '' }, 0, true);
  return text;
}
