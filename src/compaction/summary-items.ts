/**
 * Summary items: one statement someone made, quoted, with its speaker and time, rendered as one
 * bullet (`- [2026-03-04 14:10] user: Let's decide: …`) and read back from a previous summary with
 * both, so stacked compactions carry an item forward instead of re-deriving it.
 */
import { doneBody, hasDeadline, isPlainRequest, taskBody, type StatementKind } from './statement-kinds';

/** One quoted statement of the conversation. */
export interface SummaryItem {
  readonly kind: StatementKind;
  /** The statement as said (clipped at `MAX_ITEM_CHARS`). */
  readonly text: string;
  /** When its message was written (ms since epoch), when the message says. */
  readonly time?: number;
  /** `user`, `assistant` or `tool <name>`; absent for lines read from a model-written summary. */
  readonly speaker?: string;
}

/** One item at most this long: a pasted log is not a statement. */
const MAX_ITEM_CHARS = 400;

/** `2026-03-04 14:10` (UTC), the time an item line carries. */
export function itemTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
}

/** The bullet line of an item, without the leading `- `. */
export function renderItem(item: SummaryItem): string {
  const time = item.time !== undefined ? `[${itemTime(item.time)}] ` : '';
  const speaker = item.speaker ? `${item.speaker}: ` : '';
  return `${time}${speaker}${item.text}`;
}

const ITEM_LINE = /^(?:\[(\d{4}-\d\d-\d\d \d\d:\d\d)\]\s+)?(?:(user|assistant|tool [\w.-]+):\s+)?(.*)$/s;

/** Reads a bullet (without `- `) back into its time, speaker and text; `kind` is the section it sat in. */
export function parseItem(line: string, kind: StatementKind): SummaryItem {
  const m = ITEM_LINE.exec(line.trim())!;
  const time = m[1] ? Date.parse(`${m[1].replace(' ', 'T')}:00Z`) : undefined;
  return {
    kind,
    text: m[3]!,
    ...(time !== undefined && !Number.isNaN(time) ? { time } : {}),
    ...(m[2] ? { speaker: m[2] } : {}),
  };
}

/** Lowercased words only: what two statements share when one repeats the other. */
export function normalizedWords(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

function clip(text: string): string {
  const t = text.trim();
  return t.length <= MAX_ITEM_CHARS ? t : `${t.slice(0, MAX_ITEM_CHARS - 1)}…`;
}

/**
 * How long an item stays when the summary is over its budget: decisions and instructions go last,
 * then people, deadlines and errors people explained, then other tasks, then a tool's bare error
 * line and a plain request ("Please check X") first.
 */
export function itemValue(item: SummaryItem): number {
  switch (item.kind) {
    case 'decisions':
    case 'instructions':
      return 3;
    case 'people':
      return 2;
    case 'tasks':
      return hasDeadline(item.text) ? 2 : isPlainRequest(item.text) ? 0 : 1;
    case 'errors':
      return item.speaker?.startsWith('tool') ? 0 : 2;
  }
}

/** Characters of an item's bullet line: `- `, the rendered item and the newline. */
function lineChars(item: SummaryItem): number {
  return renderItem(item).length + 3;
}

/** Characters of the items' bullet lines together. */
export function itemChars(items: readonly SummaryItem[]): number {
  return items.reduce((n, item) => n + lineChars(item), 0);
}

/**
 * The items that fit `maxChars` of bullet lines, in their order: the oldest of the lowest value
 * (`itemValue`) are left out first. Returns the same array when all fit.
 */
export function itemsWithin(items: readonly SummaryItem[], maxChars: number): readonly SummaryItem[] {
  let over = itemChars(items) - maxChars;
  if (over <= 0) return items;
  const order = items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => itemValue(a.item) - itemValue(b.item) || a.index - b.index);
  const dropped = new Set<number>();
  for (const { item, index } of order) {
    if (over <= 0) break;
    dropped.add(index);
    over -= lineChars(item);
  }
  return items.filter((_, i) => !dropped.has(i));
}

/**
 * The items of a conversation in the order they were said, one per statement: a statement repeated
 * later keeps its first time; a task is closed by a later "done" line naming it.
 */
export class ItemSet {
  private readonly items = new Map<string, SummaryItem>();

  /** Adds an item unless the same statement of the same kind is already held. */
  add(item: SummaryItem): void {
    const text = clip(item.text.replace(/^[-*]\s+/, ''));
    const key = keyOf(item.kind, text);
    if (!key || this.items.has(key)) return;
    this.items.set(key, { ...item, text });
  }

  /** Closes the tasks a "done" statement names; returns false when the statement is not one. */
  close(statement: string): boolean {
    const body = doneBody(statement);
    if (body === undefined) return false;
    const done = normalizedWords(body).slice(0, 80);
    if (done.length < 4) return true;
    for (const [key, item] of this.items) {
      if (item.kind !== 'tasks') continue;
      const task = key.slice('tasks:'.length);
      if (task === done || task.includes(done) || done.includes(task)) this.items.delete(key);
    }
    return true;
  }

  values(): SummaryItem[] {
    return [...this.items.values()];
  }
}

/** A task is keyed by the work it names (what a "done" line repeats), anything else by its words. */
function keyOf(kind: StatementKind, text: string): string {
  const words = normalizedWords(kind === 'tasks' ? (taskBody(text, true) ?? text) : text).slice(
    0,
    kind === 'tasks' ? 80 : 200,
  );
  return words ? `${kind}:${words}` : '';
}
