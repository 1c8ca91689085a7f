/**
 * Workspace prompt cache: the bootstrap files of each workspace folder are read once per worker
 * process and kept until they change. A file watcher on the folder and its `memory/` folder drops
 * the cache at once; a periodic hash poll catches what watchers miss (network filesystems, editors
 * that replace a file by renaming over it). Timers and watchers never keep the process alive.
 */
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BootstrapFile } from '../../src/context/bootstrap';

export interface WorkspaceWatchSettings {
  /** Watch the folder for changes (off: the poll alone notices them). */
  readonly watch: boolean;
  /** Re-hash the cached files this often; 0 disables polling. */
  readonly pollSeconds: number;
}

interface CachedFile {
  /** null: the file does not exist. */
  readonly content: string | null;
  readonly hash: string;
}

interface FolderState {
  readonly dir: string;
  readonly settings: WorkspaceWatchSettings;
  files: Map<string, CachedFile>;
  /** Bumped by every invalidation, so a read that raced a change does not cache stale text. */
  generation: number;
  /** When the cached files were last known to match the disk (read or re-hashed). */
  verifiedAt: number;
  watchers: Map<string, FSWatcher>;
  poll?: NodeJS.Timeout;
  /** The re-hash under way; a read waits for it rather than starting another. */
  verifying?: Promise<void> | undefined;
}

const folders = new Map<string, FolderState>();

/** The named files of `dir` (relative paths; a missing file is left out), from the cache when unchanged. */
export async function readWorkspaceFiles(
  dir: string,
  names: readonly string[],
  settings: WorkspaceWatchSettings,
): Promise<BootstrapFile[]> {
  const state = folderState(dir, settings);
  if (settings.watch) ensureWatchers(state);
  // A timer the event loop was too busy to run must not serve text older than one poll interval.
  if (settings.pollSeconds > 0 && Date.now() - state.verifiedAt >= settings.pollSeconds * 1000) await verify(state);
  const generation = state.generation;
  const out: BootstrapFile[] = [];
  const loaded = new Map<string, CachedFile>();
  for (const name of names) {
    const file = state.files.get(name) ?? (await readCached(dir, name));
    loaded.set(name, file);
    if (file.content !== null) out.push({ name, content: file.content });
  }
  if (state.generation === generation) {
    for (const [name, file] of loaded) state.files.set(name, file);
  }
  return out;
}

/** Closes every watcher and poll timer (worker shutdown). */
export function closeWorkspaceWatchers(): void {
  for (const state of folders.values()) stop(state);
  folders.clear();
}

function folderState(dir: string, settings: WorkspaceWatchSettings): FolderState {
  const existing = folders.get(dir);
  if (existing && existing.settings.watch === settings.watch && existing.settings.pollSeconds === settings.pollSeconds)
    return existing;
  if (existing) stop(existing);
  const state: FolderState = {
    dir,
    settings,
    files: new Map(),
    generation: 0,
    verifiedAt: Date.now(),
    watchers: new Map(),
  };
  if (settings.pollSeconds > 0) {
    state.poll = setInterval(() => void verify(state).catch(() => invalidate(state)), settings.pollSeconds * 1000);
    state.poll.unref();
  }
  folders.set(dir, state);
  return state;
}

/** Watches the folder and `memory/` (once it exists); any event drops the cached files. */
function ensureWatchers(state: FolderState): void {
  for (const path of [state.dir, join(state.dir, 'memory')]) {
    if (state.watchers.has(path)) continue;
    let watcher: FSWatcher;
    try {
      watcher = watch(path, { persistent: false }, (_event, name) => {
        invalidate(state);
        // memory/ was created, removed or replaced: watch the folder that is there now.
        if (path === state.dir && name === 'memory') closeWatcher(state, join(state.dir, 'memory'));
      });
    } catch {
      continue; // not there yet (memory/ appears with the first flush; the folder watcher sees it)
    }
    watcher.on('error', () => {
      closeWatcher(state, path);
      invalidate(state);
    });
    watcher.unref();
    state.watchers.set(path, watcher);
  }
}

function closeWatcher(state: FolderState, path: string): void {
  state.watchers.get(path)?.close();
  state.watchers.delete(path);
}

function invalidate(state: FolderState): void {
  state.generation++;
  state.files = new Map();
}

/** Re-hashes the cached files; any difference drops the cache. */
function verify(state: FolderState): Promise<void> {
  state.verifying ??= rehash(state).finally(() => (state.verifying = undefined));
  return state.verifying;
}

async function rehash(state: FolderState): Promise<void> {
  const generation = state.generation;
  const started = Date.now();
  for (const [name, cached] of state.files) {
    const now = await readCached(state.dir, name);
    if (now.hash !== cached.hash) {
      invalidate(state);
      break;
    }
  }
  if (state.generation === generation) state.verifiedAt = started;
}

async function readCached(dir: string, name: string): Promise<CachedFile> {
  const content = await readFile(join(dir, name), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    throw err;
  });
  return { content, hash: content === null ? 'missing' : createHash('sha256').update(content).digest('hex') };
}

function stop(state: FolderState): void {
  if (state.poll) clearInterval(state.poll);
  for (const watcher of state.watchers.values()) watcher.close();
  state.watchers.clear();
}
