import { readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { importTranscriptFile, type FileImportReport } from './import-jsonl';
import { importSessionIndex, type IndexImportReport } from './import-sessions-index';
import { SessionWriteOrder } from './session-write-order';
import { sessionFromHeader } from './session-from-header';
import { settleImportedSession } from './settle-imported-session';
import type { SessionResetPolicyInput } from '../sessions/lifecycle';

/** Files an import writes at once (each its own transaction and connection; PGlite runs them one by one). */
export const IMPORT_WRITERS = 2;

/** Progress after each file (people-text goes to stderr; this is the data behind it). */
export interface ImportProgress {
  filesDone: number;
  filesTotal: number;
  /** Entries written so far. */
  entries: number;
  bytesDone: number;
  bytesTotal: number;
  file: string;
}

export interface ImportSessionsOptions {
  db: Kysely<Database>;
  agentId: string;
  /** Transcript files (`*.jsonl`) and indexes (`sessions.json`) to import. */
  paths?: readonly string[];
  /** A folder walked recursively for `*.jsonl` and `sessions.json` (backups and temp files skipped). */
  dir?: string;
  onProgress?: (progress: ImportProgress) => void;
  maxLineBytes?: number;
  rewriteRepaired?: boolean;
  now?: () => Date;
  /** Files written at once (default {@link IMPORT_WRITERS}); files of one session always write in order. */
  writers?: number;
  /** The agent's reset policy: the report says which sessions it would reset on their next message (default: daily). */
  resetPolicy?: SessionResetPolicyInput;
  /** Mark sessions the reset policy has expired fresh as of the import, so they carry on with their context. */
  keepContext?: boolean;
}

/** Everything an import did: per index, per transcript file, and totals. */
export interface ImportSessionsReport {
  agentId: string;
  indexes: IndexImportReport[];
  files: FileImportReport[];
  totals: {
    files: number;
    imported: number;
    repaired: number;
    failed: number;
    entries: number;
    bytes: number;
    /** Sessions the import created or found (created or exists). */
    sessions: number;
    /** Of those, the ones whose next message starts a new transcript (the reset policy expired them). */
    resetting: number;
  };
}

/** Why a transcript that no index names and whose header carries no key becomes no session. */
export const NO_SESSION_REASON =
  'no session: no sessions.json names this file and its header carries no sessionKey; its entries are stored, and importing it again with the sessions.json that lists it makes the session';

const INDEX_NAME = 'sessions.json';
// Left behind by a previous repair (`.bak-<pid>-<ms>`, `.repair-<pid>`): never imported again.
const LEFTOVER = /\.(bak|repair)-\d/;

/**
 * Imports legacy OpenClaw/Pi sessions for one agent: indexes first (session rows), then every
 * transcript (listed, found in `dir`, or referenced by an index), one transaction per file. A
 * transcript named by an index is stored under the index's sessionId; one no index named becomes its
 * key's session when its header carries the key (`keel export` writes it). Corrupt input never aborts
 * the run: each file reports on its own. Idempotent: a second run inserts nothing.
 */
export async function importSessions(opts: ImportSessionsOptions): Promise<ImportSessionsReport> {
  const now = opts.now ?? (() => new Date());
  const found = [...(opts.paths ?? []), ...(opts.dir ? await walk(opts.dir) : [])].map((p) => resolve(p));
  const indexFiles = unique(found.filter((p) => basename(p) === INDEX_NAME));
  const indexes: IndexImportReport[] = [];
  const owners = new Map<string, { sessionId: string; sessionKey: string }>();
  for (const file of indexFiles) {
    const index = await importSessionIndex(opts.db, opts.agentId, file, now());
    indexes.push(index);
    for (const [path, owner] of index.transcripts) owners.set(path, owner);
  }
  const transcripts = unique([...found.filter((p) => p.endsWith('.jsonl')), ...(await existing([...owners.keys()]))]);

  const sizes = await Promise.all(
    transcripts.map((f) =>
      stat(f).then(
        (s) => s.size,
        () => 0,
      ),
    ),
  );
  const bytesTotal = sizes.reduce((a, b) => a + b, 0);
  const files: FileImportReport[] = [];
  const totals = {
    files: transcripts.length,
    imported: 0,
    repaired: 0,
    failed: 0,
    entries: 0,
    bytes: 0,
    sessions: 0,
    resetting: 0,
  };
  const done = (report: FileImportReport, i: number): void => {
    files.push(report);
    totals[report.status] += 1;
    totals.entries += report.imported;
    totals.bytes += sizes[i]!;
    opts.onProgress?.({
      filesDone: i + 1,
      filesTotal: transcripts.length,
      entries: totals.entries,
      bytesDone: totals.bytes,
      bytesTotal,
      file: report.file,
    });
  };
  // Files of different sessions write side by side, each on its own connection (`writers` at once)
  // while one more is read and repaired; files of one session still write in file order.
  const order = new SessionWriteOrder();
  const writers = Math.max(1, opts.writers ?? IMPORT_WRITERS);
  const inFlight: Promise<FileImportReport>[] = [];
  for (const [i, file] of transcripts.entries()) {
    inFlight.push(
      importTranscriptFile({
        db: opts.db,
        agentId: opts.agentId,
        file,
        sessionId: owners.get(file)?.sessionId,
        maxLineBytes: opts.maxLineBytes,
        rewriteRepaired: opts.rewriteRepaired,
        now,
        turn: order.nextFile(),
      }),
    );
    // At most `writers` + 1 files in flight; reports come in file order, the oldest file first.
    if (inFlight.length > writers) {
      const oldest = i - writers;
      done(await inFlight.shift()!, oldest);
    }
  }
  const first = transcripts.length - inFlight.length;
  for (const [k, report] of (await Promise.all(inFlight)).entries()) done(report, first + k);
  // A transcript no index named gets its session from the key in its header (a `keel export`).
  for (const report of files) {
    if (report.status === 'failed' || owners.has(report.file)) continue;
    if (!report.headerSessionKey) report.noSession = NO_SESSION_REASON;
    else
      report.session = await sessionFromHeader(
        opts.db,
        opts.agentId,
        report.headerSessionKey,
        report.sessionId!,
        now(),
      );
  }
  // Each session made or found: its context figure, and whether its next message carries on.
  const sessions = [...indexes.flatMap((i) => i.entries), ...files.flatMap((f) => (f.session ? [f.session] : []))];
  for (const session of sessions) {
    if (session.status === 'skipped' || !session.sessionId) continue;
    totals.sessions += 1;
    const state = await settleImportedSession(opts.db, {
      agentId: opts.agentId,
      sessionKey: session.sessionKey,
      sessionId: session.sessionId,
      created: session.status === 'created',
      policy: opts.resetPolicy ?? {},
      keepContext: opts.keepContext ?? false,
      now: now(),
    });
    if (state) Object.assign(session, state);
    if (state?.freshness === 'resets') totals.resetting += 1;
  }
  return { agentId: opts.agentId, indexes, files, totals };
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const dirent of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, dirent.name);
    if (dirent.isDirectory()) out.push(...(await walk(path)));
    else if (
      dirent.isFile() &&
      !LEFTOVER.test(dirent.name) &&
      (dirent.name.endsWith('.jsonl') || dirent.name === INDEX_NAME)
    ) {
      out.push(path);
    }
  }
  return out.sort();
}

async function existing(paths: string[]): Promise<string[]> {
  const ok = await Promise.all(
    paths.map((p) =>
      stat(p).then(
        (s) => s.isFile(),
        () => false,
      ),
    ),
  );
  return paths.filter((_, i) => ok[i]);
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)];
}
