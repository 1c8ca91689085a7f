/**
 * The import operation (`keel import`): OpenClaw/Pi sessions from one folder, or from a list of
 * transcripts (`*.jsonl`) and their index (`sessions.json`), checked before anything is written.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Kysely } from 'kysely';
import { resetPolicyOf } from '../../config/agent-config';
import type { KeelConfig } from '../../config/keel-config';
import type { Database } from '../../store/schema';
import { importSessions, type ImportProgress, type ImportSessionsReport } from '../../transfer/import-sessions';
import { InvalidOperationInputError } from '../errors';

/** What to import, for which agent, and whether the reset policy may start the sessions over. */
export interface ImportInput {
  readonly agentId: string;
  /** One folder, or files. */
  readonly paths: readonly string[];
  /** The agent's config: its reset policy says which imported sessions would start over. */
  readonly config: KeelConfig;
  /** Mark sessions the reset policy has expired fresh as of the import. */
  readonly keepContext: boolean;
  readonly onProgress?: (progress: ImportProgress) => void;
}

/** Imports the sessions; the report says per index and per file what was created, repaired or refused. */
export async function importTranscripts(
  deps: { readonly db: Kysely<Database> },
  input: ImportInput,
): Promise<ImportSessionsReport> {
  const dirs = input.paths.filter((p) => statSync(p, { throwIfNoEntry: false })?.isDirectory());
  const files = input.paths.filter((p) => !dirs.includes(p));
  if (dirs.length + files.length > 1 && dirs.length > 0)
    throw new InvalidOperationInputError(
      'paths',
      'import one folder, or a list of files (sessions.json and *.jsonl), per run',
    );
  assertImportable(files);
  return importSessions({
    db: deps.db,
    agentId: input.agentId,
    ...(dirs.length ? { dir: dirs[0]! } : { paths: files }),
    resetPolicy: resetPolicyOf(input.config),
    keepContext: input.keepContext,
    ...(input.onProgress ? { onProgress: input.onProgress } : {}),
  });
}

/**
 * A file the importer would skip is an error, before anything is written: silently importing
 * "0 of 0 files" hides the mistake.
 */
function assertImportable(files: readonly string[]): void {
  const unusable = files.filter((f) => !f.endsWith('.jsonl') && basename(f) !== 'sessions.json');
  if (unusable.length === 0) return;
  throw new Error(
    `cannot import ${unusable.join(', ')}: keel import reads OpenClaw/Pi transcripts (*.jsonl) and their index (sessions.json), or a folder of them; nothing was imported`,
  );
}
