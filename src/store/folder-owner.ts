import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { processAlive } from './stack-state';

/**
 * One PGlite folder, one process. PGlite keeps its pages in memory and writes them back on close, so
 * two processes on one folder each work on their own copy and the last to close wins. The owner
 * marks the folder with `<folder>.owner` (pid, since when); an owner whose process is gone is stale
 * and its folder is taken over.
 */
const heldHere = new Set<string>();

export class FolderInUseError extends Error {
  override readonly name = 'FolderInUseError';
}

/** Claims `dataDir` for this process or throws FolderInUseError; returns the function that gives it up. */
export function claimPgliteFolder(dataDir: string): () => void {
  const path = `${dataDir}.owner`;
  if (heldHere.has(dataDir)) throw new FolderInUseError(`the PGlite folder ${dataDir} is already open in this process; share its store instead of opening it again`);
  const mine = JSON.stringify({ pid: process.pid, since: new Date().toISOString() });
  try {
    writeFileSync(path, mine, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const owner = readOwner(path);
    if (owner && owner.pid !== process.pid && processAlive(owner.pid)) {
      throw new FolderInUseError(
        `the PGlite folder ${dataDir} is open in process ${owner.pid} (since ${owner.since}); PGlite cannot be shared between processes. ` +
          'While `keel dev` runs, other keel commands reach its database through KEEL_HOME/stack.json (same KEEL_HOME); otherwise stop that process first.',
      );
    }
    // A stale owner (its process is gone): take the folder over.
    writeFileSync(path, mine);
  }
  heldHere.add(dataDir);
  return () => {
    heldHere.delete(dataDir);
    if (readOwner(path)?.pid === process.pid) rmSync(path, { force: true });
  };
}

function readOwner(path: string): { pid: number; since: string } | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; since?: unknown };
    return typeof owner.pid === 'number' ? { pid: owner.pid, since: String(owner.since) } : undefined;
  } catch {
    return undefined;
  }
}
