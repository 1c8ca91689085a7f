import { createWriteStream, statSync, type WriteStream } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Kysely } from 'kysely';
import { SingleBar, Presets } from 'cli-progress';
import type { Database } from '../store/schema';
import { importSessions, type ImportSessionsReport } from '../transfer/import-sessions';
import { exportSessionJsonl, type ExportReport } from '../transfer/export-jsonl';
import type { IndexEntryReport } from '../transfer/import-sessions-index';
import { getSession } from '../store/sessions-repo';
import { sessionIdsOfKey } from '../store/session-ids-repo';
import { hasEntries } from '../store/entries-repo';
import { UnknownSessionError, UsageError } from './connect';
import { shownKey } from './shown-key';
import { byteSize } from './byte-size';

const stderr = (text: string) => void process.stderr.write(text);

/** `keel import <paths…> --agent <id>`: progress bar on stderr, one report object back. */
export async function importCommand(
  db: Kysely<Database>,
  agentId: string,
  paths: string[],
  json: boolean,
): Promise<ImportSessionsReport> {
  const started = Date.now();
  const dirs = paths.filter((p) => statSync(p, { throwIfNoEntry: false })?.isDirectory());
  const files = paths.filter((p) => !dirs.includes(p));
  if (dirs.length + files.length > 1 && dirs.length > 0) {
    throw new UsageError('import one folder, or a list of files (sessions.json and *.jsonl), per run');
  }
  assertImportable(files);
  // A live bar only on a terminal; a pipe or log file gets the final counts once.
  const bar = process.stderr.isTTY
    ? new SingleBar(
        {
          stream: process.stderr,
          format: '[{bar}] {filesDone}/{filesTotal} files · {entries} entries · {size}',
          hideCursor: true,
        },
        Presets.shades_classic,
      )
    : undefined;
  let last: { filesDone: number; filesTotal: number; entries: number; bytesDone: number } | undefined;
  const report = await importSessions({
    db,
    agentId,
    ...(dirs.length ? { dir: dirs[0]! } : { paths: files }),
    onProgress: (p) => {
      const payload = {
        filesDone: p.filesDone,
        filesTotal: p.filesTotal,
        entries: p.entries,
        size: byteSize(p.bytesDone),
      };
      if (bar && !last) bar.start(Math.max(1, p.bytesTotal), p.bytesDone, payload);
      else bar?.update(p.bytesDone, payload);
      last = p;
    },
  }).finally(() => bar?.stop());
  if (!bar && last)
    stderr(`${last.filesDone}/${last.filesTotal} files · ${last.entries} entries · ${byteSize(last.bytesDone)}\n`);
  if (!json) {
    const t = report.totals;
    stderr(
      `imported ${t.imported}, repaired ${t.repaired}, failed ${t.failed} of ${t.files} files; ${t.entries} entries in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    for (const f of report.files) {
      if (f.session) stderr(`  session  ${f.session.sessionKey} → ${f.session.sessionId}: ${sessionNote(f.session)}\n`);
      if (f.status === 'imported') continue;
      stderr(`  ${f.status.padEnd(8)} ${f.file}${f.reason ? `: ${f.reason}` : ''}\n`);
      for (const d of f.dropped.slice(0, 20)) stderr(`    line ${d.line}: ${d.reason}\n`);
      if (f.dropped.length > 20) stderr(`    … ${f.dropped.length - 20} more dropped lines\n`);
    }
  }
  return report;
}

function sessionNote(session: IndexEntryReport): string {
  if (session.status === 'created') return 'created from the transcript header';
  if (session.status === 'exists') return 'the key already has a session; left as it is';
  return `not created: ${session.reason}`;
}

/**
 * A file the importer would skip is an error, before anything is written: silently importing
 * "0 of 0 files" hides the mistake.
 */
function assertImportable(files: string[]): void {
  const unusable = files.filter((f) => !isImportableName(f));
  if (unusable.length === 0) return;
  throw new Error(
    `cannot import ${unusable.join(', ')}: keel import reads OpenClaw/Pi transcripts (*.jsonl) and their index (sessions.json), or a folder of them; nothing was imported`,
  );
}

function isImportableName(file: string): boolean {
  return file.endsWith('.jsonl') || basename(file) === 'sessions.json';
}

/**
 * `keel export <sessionKey> --agent <id> [--session-id ID] [--out file]`: JSONL to the file or stdout.
 * `--session-id` names one of the key's transcripts (a rotated one); the current one by default.
 */
export async function exportCommand(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  opts: { out?: string; sessionId?: string } = {},
): Promise<ExportReport> {
  const session = await getSession(db, agentId, sessionKey);
  if (!session)
    throw new UnknownSessionError(
      sessionKey,
      `no session ${shownKey(sessionKey)} for agent ${agentId}; list them with \`keel sessions --agent ${agentId}\` (nothing was exported)`,
    );
  const sessionId = opts.sessionId ?? session.session_id;
  if (opts.sessionId !== undefined && opts.sessionId !== session.session_id) {
    const hasAny = await hasEntries(db, agentId, opts.sessionId);
    if (!hasAny)
      throw new UnknownSessionError(
        sessionKey,
        `agent ${agentId} has no transcript with session id ${opts.sessionId}; the key's current one is ${session.session_id} (nothing was exported)`,
      );
  }
  if (opts.out) assertFolderExists(opts.out);
  const out = opts.out ? createWriteStream(opts.out) : process.stdout;
  // Only the key's current transcript carries the key: importing an earlier one must not make it current.
  const keyed = sessionId === session.session_id ? { sessionKey } : {};
  const report = await exportSessionJsonl({ db, agentId, sessionId, out, ...keyed });
  if (opts.out) await endFile(out as WriteStream);
  stderr(
    `exported ${report.entries} entries (${byteSize(report.bytes)}) of session id ${sessionId}${opts.out ? ` to ${opts.out}` : ''}\n`,
  );
  return report;
}

/** One transcript of an `export --all`. */
export interface ExportedTranscript extends ExportReport {
  sessionId: string;
  startedAt: string;
  endedAt: string | null;
  current: boolean;
  /** The file written (with `--out`); a transcript without entries gets none. */
  file?: string;
}

/**
 * `keel export <sessionKey> --all [--out DIR]`: every transcript the key has had, oldest first. To
 * stdout they follow one another, each starting with its session header line; `--out` names a folder
 * that gets one `<sessionId>.jsonl` per transcript (the OpenClaw layout: `keel import DIR` reads it back).
 */
export async function exportAllCommand(
  db: Kysely<Database>,
  agentId: string,
  sessionKey: string,
  opts: { out?: string } = {},
): Promise<{ sessionKey: string; transcripts: ExportedTranscript[] }> {
  const session = await getSession(db, agentId, sessionKey);
  if (!session)
    throw new UnknownSessionError(
      sessionKey,
      `no session ${shownKey(sessionKey)} for agent ${agentId}; list them with \`keel sessions --agent ${agentId}\` (nothing was exported)`,
    );
  if (opts.out) assertIsFolder(opts.out);
  const transcripts: ExportedTranscript[] = [];
  for (const id of await sessionIdsOfKey(db, agentId, sessionKey)) {
    const described = {
      sessionId: id.sessionId,
      startedAt: id.startedAt.toISOString(),
      endedAt: id.endedAt?.toISOString() ?? null,
      current: id.current,
    };
    const hasAny = await hasEntries(db, agentId, id.sessionId);
    if (!hasAny) {
      transcripts.push({ ...described, entries: 0, bytes: 0, synthesizedHeader: false });
      continue;
    }
    const file = opts.out ? join(opts.out, `${id.sessionId}.jsonl`) : undefined;
    const out = file ? createWriteStream(file) : process.stdout;
    const report = await exportSessionJsonl({
      db,
      agentId,
      sessionId: id.sessionId,
      out,
      ...(id.current ? { sessionKey } : {}),
    });
    if (file) await endFile(out as WriteStream);
    transcripts.push({ ...described, ...report, ...(file ? { file } : {}) });
  }
  const entries = transcripts.reduce((n, t) => n + t.entries, 0);
  stderr(
    `exported ${transcripts.filter((t) => t.entries > 0).length} transcripts (${entries} entries) of ${shownKey(sessionKey)}: ${transcripts.map((t) => t.sessionId).join(', ')}${opts.out ? ` to ${opts.out}` : ''}\n`,
  );
  return { sessionKey, transcripts };
}

function endFile(out: WriteStream): Promise<void> {
  return new Promise<void>((resolveEnd, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolveEnd())));
}

/** `--all --out DIR`: the folder must exist, before anything is read. */
function assertIsFolder(folder: string): void {
  const stat = statSync(folder, { throwIfNoEntry: false });
  if (!stat)
    throw new UsageError(
      `--out ${folder}: with --all, --out names a folder (one <sessionId>.jsonl per transcript) and ${resolve(folder)} does not exist; create it first (mkdir -p ${folder})`,
    );
  if (!stat.isDirectory())
    throw new UsageError(
      `--out ${folder}: with --all, --out names a folder (one <sessionId>.jsonl per transcript), and this is a file; choose a folder`,
    );
}

/** `--out` into a folder that does not exist: say which and what to do, before anything is read. */
function assertFolderExists(file: string): void {
  const folder = dirname(resolve(file));
  const stat = statSync(folder, { throwIfNoEntry: false });
  if (!stat)
    throw new UsageError(
      `--out ${file}: the folder ${folder} does not exist; create it first (mkdir -p ${folder}) or choose another path`,
    );
  if (!stat.isDirectory())
    throw new UsageError(`--out ${file}: ${folder} is a file, not a folder; choose another path`);
}
