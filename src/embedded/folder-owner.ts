import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { processAlive } from './stack-state';

/**
 * One PGlite folder, one process. PGlite keeps its pages in memory and writes them back on close, so
 * two processes on one folder each work on their own copy and the last to close wins. The owner
 * marks the folder with `<folder>.owner` (pid, since when); an owner whose process is gone is stale
 * and its folder is taken over.
 *
 * Every step is atomic on the file system, so of two processes racing for the folder exactly one
 * wins: the owner file appears whole (written aside, then `link`ed, which fails if it exists), and a
 * stale owner is replaced only by the process that creates the takeover lock named after it
 * (`O_EXCL`), re-reads it unchanged under that lock and `rename`s its own file over it.
 */
const heldHere = new Set<string>();

/** Rounds of looking at the owner file, and the wait while another process holds the takeover lock (up to a second in all). */
const CLAIM_ROUNDS = 40;
const TAKEOVER_WAIT_MS = 25;

/** Blocks this thread for `ms` (claiming is synchronous, and only ever waits on another process). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export class FolderInUseError extends Error {
  override readonly name = 'FolderInUseError';
}

interface Owner {
  readonly pid: number;
  readonly since: string;
  /** The file's text: what identifies this owner (a pid alone can be reused). */
  readonly text: string;
}

/** Claims `dataDir` for this process or throws FolderInUseError; returns the function that gives it up. */
export function claimPgliteFolder(dataDir: string): () => void {
  const path = `${dataDir}.owner`;
  if (heldHere.has(dataDir))
    throw new FolderInUseError(
      `the PGlite folder ${dataDir} is already open in this process; share its store instead of opening it again`,
    );
  const mine = JSON.stringify({ pid: process.pid, since: new Date().toISOString() });
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, mine);
  try {
    claim(dataDir, path, aside);
  } finally {
    rmSync(aside, { force: true });
  }
  heldHere.add(dataDir);
  return () => releasePgliteFolder(dataDir);
}

/**
 * Gives up `dataDir` if this process owns it (its owner file names this pid); nothing otherwise.
 * The store's close does it; a stop that cannot wait for the close (`keel dev` past its deadline) too.
 */
export function releasePgliteFolder(dataDir: string): void {
  heldHere.delete(dataDir);
  const path = `${dataDir}.owner`;
  if (readOwner(path)?.pid === process.pid) rmSync(path, { force: true });
}

function claim(dataDir: string, path: string, aside: string): void {
  // A lock's holder may be between its checks: a few rounds settle any interleaving.
  for (let round = 0; round < CLAIM_ROUNDS; round++) {
    try {
      linkSync(aside, path);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(path);
    if (owner === undefined) continue; // released in between: try again
    if (owner.pid > 0 && owner.pid !== process.pid && processAlive(owner.pid))
      throw inUse(dataDir, owner.pid, owner.since);
    if (takeOver(dataDir, path, aside, owner)) return;
  }
  throw new FolderInUseError(
    `the PGlite folder ${dataDir} keeps changing owner (${path}); another keel process is starting on it, try again`,
  );
}

/**
 * Replaces the stale `owner` unless another process is doing so. False when the owner file changed
 * meanwhile, or (after a short wait) when another live process holds the takeover lock: the caller
 * looks again and names whoever owns the folder then. Throws when the lock's holder died.
 */
function takeOver(dataDir: string, path: string, aside: string, owner: Owner): boolean {
  const lock = `${path}.takeover-${owner.pid}-${hashOf(owner.text)}`;
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const taker = Number(readText(lock));
    if (Number.isInteger(taker) && taker > 0 && !processAlive(taker)) {
      throw new FolderInUseError(
        `the PGlite folder ${dataDir}: process ${taker} died while taking it over from process ${owner.pid}; remove ${lock} and try again`,
      );
    }
    // A live process is between its checks: it may win or find the owner changed and back off. Look
    // again in a moment, so the error names the process that won, not one that was only trying.
    pause(TAKEOVER_WAIT_MS);
    return false;
  }
  try {
    // Under the lock: the file must still be the stale owner it was named after.
    if (readOwner(path)?.text !== owner.text) return false;
    renameSync(aside, path);
    return true;
  } finally {
    rmSync(lock, { force: true });
  }
}

function inUse(dataDir: string, pid: number, since: string): FolderInUseError {
  return new FolderInUseError(
    `the PGlite folder ${dataDir} is open in process ${pid} (since ${since}); PGlite cannot be shared between processes. ` +
      'While `keel dev` runs, other keel commands reach its database through KEEL_HOME/stack.json (same KEEL_HOME); otherwise stop that process first.',
  );
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The owner file, or undefined when there is none. An unreadable one is a stale owner of pid 0. */
function readOwner(path: string): Owner | undefined {
  const text = readText(path);
  if (text === undefined) return undefined;
  try {
    const owner = JSON.parse(text) as { pid?: unknown; since?: unknown };
    if (typeof owner.pid === 'number') return { pid: owner.pid, since: String(owner.since), text };
  } catch {
    // fall through: not an owner any process wrote whole
  }
  return { pid: 0, since: 'unknown', text };
}

/** A short stable name for an owner file's text (FNV-1a), for its takeover lock. */
function hashOf(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16);
}
