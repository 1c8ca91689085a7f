import { createWriteStream, statSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import { importSessions, type ImportSessionsReport } from '../transfer/import-sessions';
import { exportSessionJsonl, type ExportReport } from '../transfer/export-jsonl';
import { getSession } from '../store/sessions-repo';
import { UnknownSessionError, UsageError } from './connect';

const stderr = (text: string) => void process.stderr.write(text);

/** `keel import <paths…> --agent <id>`: progress bar on stderr, one report object back. */
export async function importCommand(db: Kysely<Database>, agentId: string, paths: string[], json: boolean): Promise<ImportSessionsReport> {
  const started = Date.now();
  const dirs = paths.filter((p) => statSync(p, { throwIfNoEntry: false })?.isDirectory());
  const files = paths.filter((p) => !dirs.includes(p));
  if (dirs.length + files.length > 1 && dirs.length > 0) {
    throw new UsageError('import one folder, or a list of files (sessions.json and *.jsonl), per run');
  }
  const report = await importSessions({
    db,
    agentId,
    ...(dirs.length ? { dir: dirs[0]! } : { paths: files }),
    onProgress: (p) => {
      const ratio = p.bytesTotal > 0 ? p.bytesDone / p.bytesTotal : 1;
      const bar = '█'.repeat(Math.round(ratio * 24)).padEnd(24, '░');
      stderr(`\r[${bar}] ${p.filesDone}/${p.filesTotal} files · ${p.entries} entries · ${(p.bytesDone / 1e6).toFixed(1)} MB`);
    },
  });
  stderr('\n');
  if (!json) {
    const t = report.totals;
    stderr(`imported ${t.imported}, repaired ${t.repaired}, failed ${t.failed} of ${t.files} files; ${t.entries} entries in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    for (const f of report.files) {
      if (f.status === 'imported') continue;
      stderr(`  ${f.status.padEnd(8)} ${f.file}${f.reason ? `: ${f.reason}` : ''}\n`);
      for (const d of f.dropped.slice(0, 20)) stderr(`    line ${d.line}: ${d.reason}\n`);
      if (f.dropped.length > 20) stderr(`    … ${f.dropped.length - 20} more dropped lines\n`);
    }
  }
  return report;
}

/** `keel export <sessionKey> --agent <id> [--out file]`: JSONL to the file or stdout. */
export async function exportCommand(db: Kysely<Database>, agentId: string, sessionKey: string, outFile?: string): Promise<ExportReport> {
  const session = await getSession(db, agentId, sessionKey);
  if (!session) throw new UnknownSessionError(sessionKey, `agent ${agentId} has no session ${sessionKey}; check the key and --agent (nothing was exported)`);
  const out = outFile ? createWriteStream(outFile) : process.stdout;
  const report = await exportSessionJsonl({ db, agentId, sessionId: session.session_id, out });
  if (outFile) await new Promise<void>((resolve, reject) => (out as ReturnType<typeof createWriteStream>).end((err?: Error | null) => (err ? reject(err) : resolve())));
  stderr(`exported ${report.entries} entries (${(report.bytes / 1e6).toFixed(2)} MB)${outFile ? ` to ${outFile}` : ''}\n`);
  return report;
}
