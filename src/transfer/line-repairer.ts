import { createHash } from 'node:crypto';
import type { JsonlLine } from './jsonl-lines';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../text/json-depth';
import type { TranscriptEntry } from '../context/types';
import { repairedEntry, validateEntry, validateHeader, type ImportedSessionHeader } from './transcript-entry-schema';

/** What the repairer changed in the lines it kept (each one makes the file "repaired"). */
export interface LineRepairCounts {
  /** Entries without an id that got a deterministic one. */
  generatedIds: number;
  /** Entries whose timestamp was missing or not a date and took the previous entry's. */
  timestampsFilled: number;
  /** Entries with NUL characters or lone surrogates (PostgreSQL jsonb rejects both), replaced by U+FFFD. */
  sanitizedEntries: number;
}

/** The verdict on one line. `fatal` stops the file: nothing of it is imported. */
export type LineOutcome =
  | { kind: 'blank' }
  | { kind: 'header'; header: ImportedSessionHeader }
  | { kind: 'entry'; entry: TranscriptEntry; changed: boolean }
  | { kind: 'dropped'; reason: string }
  | { kind: 'fatal'; reason: string };

// Escapes that parse in JSON but cannot be stored in jsonb: \u0000 and surrogate halves.
const INVALID_JSON = 'invalid JSON';
const UNSTORABLE_ESCAPE = /\\u(0000|[dD][89a-fA-F])/;
// eslint-disable-next-line no-control-regex -- matching NUL is the point: jsonb cannot store it.
const UNSTORABLE_CHARS = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * File-level repair, one line at a time (OpenClaw's file-level transcript repair), so a file is
 * streamed and never held whole:
 * - blank lines are skipped silently; unparseable, over-long, too deeply nested or invalid lines are
 *   dropped with a reason;
 * - the first parseable line must be the session header, else the file is `fatal` (not imported);
 * - a line whose id was already seen is a duplicate: the first is kept;
 * - a missing id becomes `imp-<hash of session id, line number, line text>`, so re-importing the
 *   same file yields the same id and inserts nothing twice;
 * - a missing or unparseable timestamp takes the previous entry's (the header's at least).
 */
export class LineRepairer {
  readonly counts: LineRepairCounts = { generatedIds: 0, timestampsFilled: 0, sanitizedEntries: 0 };
  private header: ImportedSessionHeader | undefined;
  private readonly firstLineOfId = new Map<string, number>();
  private lastTimestamp = '';
  private droppedBeforeHeader: { line: number; reason: string } | undefined;

  constructor(private readonly maxLineBytes: number) {}

  /** The session header, once the first entry line was read. */
  get sessionHeader(): ImportedSessionHeader | undefined {
    return this.header;
  }

  /** Classifies one line; keeps the state needed for duplicates, ids and timestamps. */
  accept(line: JsonlLine): LineOutcome {
    const outcome = this.classify(line);
    if (outcome.kind === 'dropped' && !this.header && !this.droppedBeforeHeader)
      this.droppedBeforeHeader = { line: line.lineNumber, reason: outcome.reason };
    return outcome;
  }

  /**
   * Why the file had no session header, once it ended without one: an empty file, one that is not
   * JSON Lines at all (an HTML page saved as `.jsonl`), or one whose every line was dropped.
   */
  missingHeaderReason(): string {
    const first = this.droppedBeforeHeader;
    if (!first) return 'empty file: no session header';
    if (first.reason.startsWith(INVALID_JSON))
      return `not JSON Lines: line ${first.line} is not JSON (${first.reason}); a transcript starts with {"type":"session","id":...,"timestamp":...}`;
    return `no session header: every line was dropped (line ${first.line}: ${first.reason})`;
  }

  private classify(line: JsonlLine): LineOutcome {
    if (line.tooLong)
      return {
        kind: 'dropped',
        reason: `line is ${line.bytes} bytes, over the ${this.maxLineBytes}-byte import limit`,
      };
    const text = line.text;
    if (text.trim().length === 0) return { kind: 'blank' };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return { kind: 'dropped', reason: `${INVALID_JSON}: ${(err as Error).message.slice(0, 120)}` };
    }
    if (jsonDepthExceeds(value))
      return { kind: 'dropped', reason: `JSON nested more than ${MAX_JSON_DEPTH} levels deep` };
    let sanitized = false;
    if (UNSTORABLE_ESCAPE.test(text)) {
      const cleaned = replaceUnstorable(value);
      sanitized = cleaned !== value;
      value = cleaned;
    }
    if (!this.header) return this.acceptHeader(value, line.lineNumber);

    if ((value as { type?: unknown })?.type === 'session')
      return { kind: 'dropped', reason: 'a second session header' };
    const checked = validateEntry(value);
    if (!checked.ok) return { kind: 'dropped', reason: checked.reason };
    const entry = checked.entry;
    let changed = sanitized;
    if (sanitized) this.counts.sanitizedEntries += 1;

    let id: string;
    if (typeof entry.id === 'string' && entry.id.length > 0) {
      id = entry.id;
    } else {
      id = generatedId(this.header.id, line.lineNumber, text);
      this.counts.generatedIds += 1;
      changed = true;
    }
    const firstLine = this.firstLineOfId.get(id);
    if (firstLine !== undefined)
      return { kind: 'dropped', reason: `duplicate id "${id}" (first on line ${firstLine})` };
    this.firstLineOfId.set(id, line.lineNumber);

    if (typeof entry.timestamp === 'string' && !Number.isNaN(Date.parse(entry.timestamp))) {
      this.lastTimestamp = entry.timestamp;
    } else {
      this.counts.timestampsFilled += 1;
      changed = true;
    }
    return { kind: 'entry', entry: repairedEntry(entry, id, this.lastTimestamp), changed };
  }

  private acceptHeader(value: unknown, lineNumber: number): LineOutcome {
    const type = (value as { type?: unknown })?.type;
    if (type !== 'session') {
      return {
        kind: 'fatal',
        reason: `missing session header: the first entry (line ${lineNumber}) has type ${JSON.stringify(type)}; a transcript must start with {"type":"session","id":...,"timestamp":...}`,
      };
    }
    const checked = validateHeader(value);
    if (!checked.ok)
      return { kind: 'fatal', reason: `invalid session header on line ${lineNumber}: ${checked.reason}` };
    this.header = checked.header;
    this.firstLineOfId.set(checked.header.id, lineNumber);
    this.lastTimestamp = checked.header.timestamp;
    return { kind: 'header', header: checked.header };
  }
}

function generatedId(sessionId: string, lineNumber: number, text: string): string {
  return `imp-${createHash('sha256').update(`${sessionId}\n${lineNumber}\n${text}`).digest('hex').slice(0, 16)}`;
}

/** Deep copy with unstorable characters replaced; the same value when there were none. */
function replaceUnstorable(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UNSTORABLE_CHARS, '\uFFFD');
  if (Array.isArray(value)) {
    const out = value.map(replaceUnstorable);
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (typeof value === 'object' && value !== null) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const key = k.replace(UNSTORABLE_CHARS, '\uFFFD');
      const cleaned = replaceUnstorable(v);
      if (key !== k || cleaned !== v) changed = true;
      out[key] = cleaned;
    }
    return changed ? out : value;
  }
  return value;
}
