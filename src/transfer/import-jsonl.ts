import { stat } from 'node:fs/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import {
  appendEntriesNotingPrior,
  loadActiveEntries,
  markOffBranch,
  redactEntries,
  type EntryToAppend,
} from '../store/entries-repo';
import { jsonTextMayHoldSecret, type Redaction } from '../security/redact';
import type { AgentMessage, TranscriptEntry } from '../context/types';
import { activeMessages } from '../context/active-context';
import { repairToolUseResultPairing } from '../context/repair-tool-use-result-pairing';
import { MAX_IMPORT_LINE_BYTES, readJsonlLines, type JsonlLine } from './jsonl-lines';
import { LineRepairer, type LineRepairCounts } from './line-repairer';
import { rewriteRepairedFile } from './rewrite-repaired-file';
import { WindowSkeletons } from './pairing-skeleton';
import type { WriteTurn } from './session-write-order';
import type { IndexEntryReport } from './import-sessions-index';
import { BranchTracker } from './active-branch';

/** Rows per INSERT statement while importing (one transaction per file either way). */
export const IMPORT_BATCH_ROWS = 500;
/** Payload bytes per INSERT statement, so a batch of huge lines stays one bounded statement. */
export const IMPORT_BATCH_BYTES = 8 * 1024 * 1024;
/** Entries whose pairing skeletons a file keeps; past this the report reads the session back instead. */
const MAX_SKELETONS = 200_000;

/** A line the import did not keep, and why. */
export interface DroppedLine {
  readonly line: number;
  readonly reason: string;
}

/** What the load path's tool-pairing repair will do to this session's active window (rows are not rewritten). */
export interface ToolPairingReport {
  added: number;
  droppedDuplicates: number;
  droppedOrphans: number;
  moved: boolean;
}

/**
 * The outcome of one transcript file. `imported`: every line kept as it was; `repaired`: lines were
 * dropped or fixed (see `dropped`, `repaired`); `failed`: nothing was imported (see `reason`).
 */
export interface FileImportReport {
  file: string;
  status: 'imported' | 'repaired' | 'failed';
  sessionId?: string;
  /** The session key the file's header carries (`keel export` writes it), if any. */
  headerSessionKey?: string;
  /** The session created from {@link headerSessionKey} when no index named the file. */
  session?: IndexEntryReport;
  /** Why the file gave no session a transcript (no index named it, and its header names no key). */
  noSession?: string;
  /** Rows written now. */
  imported: number;
  /** Entries accepted that were already stored (a re-import). */
  alreadyPresent: number;
  bytes: number;
  dropped: DroppedLine[];
  repaired: LineRepairCounts & { toolPairing?: ToolPairingReport };
  redactions: Redaction[];
  /**
   * The file's tree: when its author went back and wrote on from an earlier entry, the entries of the
   * branches left are stored and searchable but never sent to a model; `leafId` is where it carries on.
   */
  branches?: { readonly leafId: string; readonly offBranch: number } | { readonly untraced: string };
  /** The original file, kept when the file was repaired and rewritten. */
  backup?: string;
  reason?: string;
}

export interface ImportFileOptions {
  db: Kysely<Database>;
  agentId: string;
  file: string;
  /** Store under this session id (a sessions.json index names it); default: the header's id. */
  sessionId?: string | undefined;
  /** Lines longer than this are dropped (default {@link MAX_IMPORT_LINE_BYTES}). */
  maxLineBytes?: number | undefined;
  /**
   * When lines were dropped or fixed, rewrite the file as imported and keep the original as
   * `<file>.bak-<pid>-<ms>` (default true, as OpenClaw's file repair).
   */
  rewriteRepaired?: boolean | undefined;
  now?: (() => Date) | undefined;
  /**
   * This file's place among the files of an import written side by side: it writes once the earlier
   * files of its session are written, and is read and repaired meanwhile.
   */
  turn?: WriteTurn | undefined;
}

/** Ends a file's transaction: nothing of the file is imported. */
export class TranscriptCorruptError extends Error {
  override readonly name = 'TranscriptCorruptError';
  constructor(
    readonly file: string,
    /** 1-based line that made the file unusable (0: the file as a whole). */
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/**
 * Imports one Pi/OpenClaw JSONL transcript. Streams the file (memory bounded by the line cap and two
 * batches: one being written, one being read), repairs it line by line (`LineRepairer`), redacts
 * secrets, and writes every accepted entry, header included, in one transaction with
 * `ON CONFLICT DO NOTHING`: a re-import inserts nothing, a failure leaves nothing half-written. Never
 * throws for bad input: the report says what happened. `token_estimate` is left null (the load path
 * estimates what it loads), and so is the search index (the session's first history_search builds it).
 */
export async function importTranscriptFile(opts: ImportFileOptions): Promise<FileImportReport> {
  try {
    return await importFile(opts);
  } finally {
    opts.turn?.done();
  }
}

async function importFile(opts: ImportFileOptions): Promise<FileImportReport> {
  const { db, agentId, file } = opts;
  const maxLineBytes = opts.maxLineBytes ?? MAX_IMPORT_LINE_BYTES;
  const report: FileImportReport = {
    file,
    status: 'imported',
    imported: 0,
    alreadyPresent: 0,
    bytes: 0,
    dropped: [],
    repaired: { generatedIds: 0, timestampsFilled: 0, sanitizedEntries: 0 },
    redactions: [],
  };
  try {
    report.bytes = (await stat(file)).size;
  } catch (err) {
    return { ...report, status: 'failed', reason: `cannot read file: ${(err as Error).message}` };
  }

  const repairer = new LineRepairer(maxLineBytes);
  // Only fixed lines are remembered, for the rewrite; kept lines are re-read from the file.
  const fixedLines = new Map<number, string>();
  let accepted = 0;
  const redactions = new Map<Redaction['kind'], number>();
  // The pairing report from this file alone, when the session had nothing before it.
  let skeletons: WindowSkeletons | undefined = new WindowSkeletons(MAX_SKELETONS);
  let batch: EntryToAppend[] = [];
  let batchBytes = 0;
  const tree = new BranchTracker();
  /** Takes one line into the batch; true when the batch is full. */
  const take = (line: JsonlLine): boolean => {
    const outcome = repairer.accept(line);
    if (outcome.kind === 'blank') return false;
    if (outcome.kind === 'fatal') throw new TranscriptCorruptError(file, line.lineNumber, outcome.reason);
    if (outcome.kind === 'dropped') {
      report.dropped.push({ line: line.lineNumber, reason: outcome.reason });
      return false;
    }
    const entry: TranscriptEntry = outcome.kind === 'header' ? outcome.header : outcome.entry;
    if (outcome.kind === 'header') {
      report.sessionId = opts.sessionId ?? outcome.header.id;
      if (outcome.header.sessionKey) report.headerSessionKey = outcome.header.sessionKey;
    } else {
      if (outcome.changed) fixedLines.set(line.lineNumber, JSON.stringify(entry));
      tree.add(entry.id, (entry as { parentId?: string | null }).parentId);
    }
    // A line kept as it was, with nothing secret-shaped in it, is stored as its own text.
    const text = line.tooLong ? undefined : line.text;
    const checked = text !== undefined && outcome.kind === 'entry' && !outcome.changed && !jsonTextMayHoldSecret(text);
    batch.push({ entry, tokenEstimate: null, ...(checked ? { checkedJson: text } : {}) });
    skeletons?.add(entry);
    accepted += 1;
    batchBytes += line.bytes;
    return batch.length >= IMPORT_BATCH_ROWS || batchBytes >= IMPORT_BATCH_BYTES;
  };
  const lines = readJsonlLines(file, { maxLineBytes });
  let ended = false;
  /** Reads lines until the batch is full or the file ends. */
  const fill = async (): Promise<void> => {
    for (let next = await lines.next(); ; next = await lines.next()) {
      if (next.done) {
        ended = true;
        return;
      }
      if (take(next.value)) return;
    }
  };
  try {
    // The first batch is read before anything is written: while earlier files of an import are still
    // being written (`turn`), this one is read and repaired.
    await fill();
    // A batch is never full before the header (a first entry that is not one is fatal).
    if (!repairer.sessionHeader) throw new TranscriptCorruptError(file, 0, repairer.missingHeaderReason());
    await opts.turn?.wait(report.sessionId!);
    let first = true;
    const write = async (executor: Kysely<Database>, rows: EntryToAppend[]): Promise<void> => {
      const { redacted, redactions: found } = redactEntries(rows);
      const noted = await appendEntriesNotingPrior(executor, agentId, report.sessionId!, redacted, {
        deferSearchIndex: true,
      });
      // Whether the session had rows before this file decides where the pairing report comes from.
      if (first && noted.hadEntries) skeletons = undefined;
      first = false;
      report.imported += noted.inserted;
      for (const r of found) redactions.set(r.kind, (redactions.get(r.kind) ?? 0) + r.count);
    };
    /** Marks the entries off the file's active branch (an update: a re-import marks them again). */
    const markBranches = async (executor: Kysely<Database>): Promise<void> => {
      const traced = tree.outcome();
      if (traced.kind === 'untraced') report.branches = { untraced: traced.why };
      if (traced.kind !== 'branched') return;
      await markOffBranch(executor, agentId, report.sessionId!, traced.offBranch);
      report.branches = { leafId: traced.leafId, offBranch: traced.offBranch.length };
    };
    if (ended) {
      // The whole file is one batch: one statement, atomic by itself, needs no transaction around it.
      await write(db, batch);
      await markBranches(db);
    } else {
      await db.transaction().execute(async (trx) => {
        // The batch being written while the next is read: on PostgreSQL the server inserts one batch
        // while this process parses the next. At most one in flight; its failure surfaces at the next flush.
        let writing: Promise<void> = Promise.resolve();
        const flush = async (): Promise<void> => {
          await writing;
          if (batch.length === 0) return;
          writing = write(trx, batch);
          // Awaited at the next flush; until then a failure must not count as unhandled.
          writing.catch(() => undefined);
          batch = [];
          batchBytes = 0;
        };
        try {
          for (;;) {
            await flush();
            if (ended) break;
            await fill();
          }
          await writing;
          await markBranches(trx);
        } finally {
          // Nothing left running on the transaction when it ends (a fatal line ends it mid-write).
          await writing.catch(() => undefined);
        }
      });
    }
  } catch (err) {
    const reason =
      err instanceof TranscriptCorruptError ? err.reason : `database write failed: ${(err as Error).message}`;
    return { ...report, status: 'failed', imported: 0, reason };
  } finally {
    // Closes the file when a fatal line or a failed write stopped the reading early.
    await lines.return(undefined);
  }

  report.alreadyPresent = accepted - report.imported;
  report.redactions = [...redactions].map(([kind, count]) => ({ kind, count }));
  const counts = repairer.counts;
  // From the file only when every accepted entry is a new row (no id repeated in it) and no redaction or
  // sanitizing could have rewritten an id the repair compares; else from what was stored.
  const window =
    report.imported === accepted && redactions.size === 0 && counts.sanitizedEntries === 0
      ? skeletons?.messages()
      : undefined;
  report.repaired = {
    ...counts,
    toolPairing: window ? pairingCounts(window) : await toolPairingReport(db, agentId, report.sessionId!),
  };
  if (report.dropped.length > 0 || counts.generatedIds + counts.timestampsFilled + counts.sanitizedEntries > 0) {
    report.status = 'repaired';
    if (opts.rewriteRepaired !== false) {
      try {
        report.backup = await rewriteRepairedFile({
          file,
          maxLineBytes,
          droppedLines: new Set(report.dropped.map((d) => d.line)),
          fixedLines,
          now: opts.now?.() ?? new Date(),
        });
      } catch (err) {
        report.reason = `imported, but the repaired file could not be written: ${(err as Error).message}`;
      }
    }
  }
  return report;
}

/** Runs the load path's pairing repair over the stored active window and reports its counts. */
async function toolPairingReport(db: Kysely<Database>, agentId: string, sessionId: string): Promise<ToolPairingReport> {
  const { compaction, rows } = await loadActiveEntries(db, agentId, sessionId);
  const messages = activeMessages(
    compaction,
    rows.map((r) => ({ id: r.id, entry: r.payload })),
  );
  return pairingCounts(messages);
}

/** What the pairing repair does to these messages, in counts. */
function pairingCounts(messages: AgentMessage[]): ToolPairingReport {
  const result = repairToolUseResultPairing(messages);
  return {
    added: result.added.length,
    droppedDuplicates: result.droppedDuplicateCount,
    droppedOrphans: result.droppedOrphanCount,
    moved: result.moved,
  };
}
