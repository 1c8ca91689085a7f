import { createWriteStream, statSync, type WriteStream } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Kysely } from 'kysely';
import { SingleBar, Presets } from 'cli-progress';
import type { Database } from '../store/schema';
import type { ImportSessionsReport } from '../transfer/import-sessions';
import type { ExportReport } from '../transfer/export-jsonl';
import type { IndexEntryReport } from '../transfer/import-sessions-index';
import type { FileImportReport } from '../transfer/import-jsonl';
import { UsageError } from './connect';
import { importTranscripts } from '../operations/transcripts/import-transcripts';
import {
  exportAllTranscripts,
  exportTranscript,
  type ExportedTranscript,
} from '../operations/transcripts/export-transcripts';
import { shownKey } from '../operations/shown-key';
import { byteSize } from './byte-size';
import type { KeelConfig } from '../config/keel-config';

const stderr = (text: string) => void process.stderr.write(text);

/** `keel import <paths…> --agent <id>`: progress bar on stderr, one report object back. */
export async function importCommand(
  db: Kysely<Database>,
  agentId: string,
  paths: string[],
  opts: { readonly json: boolean; readonly config: KeelConfig; readonly keepContext: boolean },
): Promise<ImportSessionsReport> {
  const { json } = opts;
  const started = Date.now();
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
  const report = await importTranscripts(
    { db },
    {
      agentId,
      paths,
      config: opts.config,
      keepContext: opts.keepContext,
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
    },
  ).finally(() => bar?.stop());
  if (!bar && last)
    stderr(`${last.filesDone}/${last.filesTotal} files · ${last.entries} entries · ${byteSize(last.bytesDone)}\n`);
  if (!json) {
    const t = report.totals;
    stderr(
      `imported ${t.imported}, repaired ${t.repaired}, failed ${t.failed} of ${t.files} files; ${t.entries} entries in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    for (const index of report.indexes) {
      if (index.reason) stderr(`  failed   ${index.file}: ${index.reason}\n`);
      for (const e of index.entries)
        stderr(
          `  session  ${e.sessionKey}${e.sessionId ? ` → ${e.sessionId}` : ''}: ${sessionNote(e, 'from sessions.json')}\n`,
        );
    }
    for (const f of report.files) {
      if (f.session)
        stderr(
          `  session  ${f.session.sessionKey} → ${f.session.sessionId}: ${sessionNote(f.session, 'from the transcript header')}\n`,
        );
      if (f.noSession) stderr(`  no session ${f.file}: ${f.noSession}\n`);
      if (f.branches) stderr(`  branches ${f.file}: ${branchNote(f.branches)}\n`);
      if (f.status === 'imported') continue;
      stderr(`  ${f.status.padEnd(8)} ${f.file}${f.reason ? `: ${f.reason}` : ''}\n`);
      for (const d of f.dropped.slice(0, 20)) stderr(`    line ${d.line}: ${d.reason}\n`);
      if (f.dropped.length > 20) stderr(`    … ${f.dropped.length - 20} more dropped lines\n`);
    }
  }
  // Warnings, with --json too: stdout carries the report, these say what to do about it.
  for (const line of freshnessLines(report, opts.config)) stderr(`${line}\n`);
  if (report.totals.sessions === 0)
    stderr(
      `nothing usable was imported: no session was created or found (${json ? 'the report' : 'each file above'} says why)\n`,
    );
  return report;
}

/** What a file's tree came to: the branches left behind, or why it was not traced. */
function branchNote(branches: NonNullable<FileImportReport['branches']>): string {
  if ('untraced' in branches) return `not traced, ${branches.untraced}`;
  const n = branches.offBranch;
  return `${n} ${n === 1 ? 'entry' : 'entries'} on branches left behind: kept and searchable, never sent to the model (it carries on from ${branches.leafId})`;
}

function sessionNote(session: IndexEntryReport, source: string): string {
  const context =
    session.contextTokens !== undefined ? ` · context ${session.contextTokens.toLocaleString('en-US')} tokens` : '';
  const freshness =
    session.freshness === 'resets'
      ? ` · resets on its next message (${session.resetReason} reset)`
      : session.freshness === 'kept'
        ? ' · kept fresh (--keep-context)'
        : '';
  if (session.status === 'created') return `created ${source}${context}${freshness}`;
  if (session.status === 'exists') return `the key already has a session; left as it is${freshness}`;
  return `not created: ${session.reason}`;
}

/**
 * What the reset policy does to the imported sessions: the ones whose next message would start a
 * new transcript, with the policy and the option that keeps them; or the ones the option kept.
 */
function freshnessLines(report: ImportSessionsReport, config: KeelConfig): string[] {
  const sessions = [...report.indexes.flatMap((i) => i.entries), ...report.files.flatMap((f) => f.session ?? [])];
  const resetting = sessions.filter((s) => s.freshness === 'resets');
  const kept = sessions.filter((s) => s.freshness === 'kept');
  const lines: string[] = [];
  if (resetting.length > 0)
    lines.push(
      `${resetting.length} imported session${resetting.length === 1 ? '' : 's'} would start over on the next message, without ${resetting.length === 1 ? 'its' : 'their'} context: ${resetPolicyText(config)} has expired ${resetting.length === 1 ? 'it' : 'them'} (${resetting.map((s) => shownKey(s.sessionKey)).join(', ')}). To carry on with ${resetting.length === 1 ? 'it' : 'them'}, run the same keel import again with --keep-context (marks them fresh as of the import).`,
    );
  if (kept.length > 0)
    lines.push(
      `kept ${kept.length} session${kept.length === 1 ? '' : 's'} fresh as of now (--keep-context): the next message carries on with the imported context`,
    );
  return lines;
}

function resetPolicyText(config: KeelConfig): string {
  const idle = config.idleMinutes !== undefined ? `idle expiry after ${config.idleMinutes} min` : '';
  if (config.resetMode === 'daily')
    return `the daily reset (${String(config.resetHour).padStart(2, '0')}:00 ${config.resetTimeZone}, KEEL_RESET_MODE)${idle ? ` or ${idle}` : ''}`;
  return `the ${idle} (KEEL_RESET_MODE=idle)`;
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
  const { sessionId, ...report } = await exportTranscript(
    { db },
    {
      agentId,
      sessionKey,
      sessionId: opts.sessionId,
      open: () => {
        if (!opts.out) return { out: process.stdout, finish: () => Promise.resolve() };
        assertFolderExists(opts.out);
        const file = createWriteStream(opts.out);
        return { out: file, file: opts.out, finish: () => endFile(file) };
      },
    },
  );
  stderr(
    `exported ${report.entries} entries (${byteSize(report.bytes)}) of session id ${sessionId}${opts.out ? ` to ${opts.out}` : ''}\n`,
  );
  return report;
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
  const { transcripts } = await exportAllTranscripts(
    { db },
    {
      agentId,
      sessionKey,
      check: () => {
        if (opts.out) assertIsFolder(opts.out);
      },
      openFor: (sessionId) => {
        if (!opts.out) return { out: process.stdout, finish: () => Promise.resolve() };
        const path = join(opts.out, `${sessionId}.jsonl`);
        const file = createWriteStream(path);
        return { out: file, file: path, finish: () => endFile(file) };
      },
    },
  );
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
