import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every file under `dir` (recursively) whose name passes `keep`, in directory order; none when `dir` is missing. */
export function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? filesUnder(join(dir, d.name), keep) : keep(d.name) ? [join(dir, d.name)] : [],
  );
}

/**
 * A sha256 over the files' paths (relative to `root`) and contents, after `seed`, in path order
 * whatever order they come in: it changes when a file is added, removed, renamed or edited. Used to tell whether a build still matches its sources.
 */
export function hashFiles(root: string, files: readonly string[], seed = ''): string {
  const hash = createHash('sha256').update(seed).update('\0');
  for (const file of [...files].sort())
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}
