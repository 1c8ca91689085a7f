/**
 * An empty PGlite data folder, initialised once and handed to every in-memory store a suite opens.
 * PGlite.create runs initdb inside WebAssembly: ~3 s of CPU here, against ~0.8 s to load the same
 * folder from a dump, and the suites open several hundred such stores a run. Made by jest's
 * globalSetup under node_modules/.cache, named by PGlite's version (its initdb's output).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openStore } from '../../src/store/connect';
import { filesUnder, hashFiles } from '../../workers/file-tree-hash';

const NODE_MODULES = join(__dirname, '..', '..', 'node_modules');
const CACHE = join(NODE_MODULES, '.cache', 'keel-pglite');
/** Set by globalSetup for every test worker: the dump's file. */
export const PGLITE_TEMPLATE_ENV = 'KEEL_TEST_PGLITE_TEMPLATE';
/** Set by globalSetup for every test worker: the dump of the template with Keel's migrations run. */
export const PGLITE_MIGRATED_TEMPLATE_ENV = 'KEEL_TEST_PGLITE_MIGRATED_TEMPLATE';

/** Writes the dump of a freshly initialised PGlite unless this PGlite version's is there; returns the file. */
export async function buildPgliteTemplate(): Promise<string> {
  const version = (
    JSON.parse(readFileSync(join(NODE_MODULES, '@electric-sql', 'pglite', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  const file = join(CACHE, `empty-${version}.tar`);
  if (existsSync(file)) return file;
  mkdirSync(CACHE, { recursive: true });
  const db = await PGlite.create('memory://');
  try {
    const dump = await db.dumpDataDir('none');
    // Renamed into place: a run beside this one never reads half a file.
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
  } finally {
    await db.close();
  }
  return file;
}

/**
 * The empty template with Keel's migrations run, written unless this state of the store's sources
 * has one: a test store opened from it finds its schema current instead of running every migration
 * (a second or more of PGlite's CPU per store). Named by a hash of src/store, so a new migration
 * builds a new one. Returns the file.
 */
export async function buildMigratedPgliteTemplate(emptyFile: string): Promise<string> {
  const root = join(__dirname, '..', '..');
  const sources = filesUnder(join(root, 'src', 'store'), (name) => name.endsWith('.ts'));
  const file = emptyFile.replace(/\.tar$/, `-migrated-${hashFiles(root, sources).slice(0, 16)}.tar`);
  if (existsSync(file)) return file;
  const store = await openStore({
    kind: 'pglite',
    dataDir: 'memory://',
    loadDataDir: new Blob([readFileSync(emptyFile)]),
  });
  try {
    const dump = await store.pglite!.dumpDataDir('none');
    const partial = `${file}.${process.pid}`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, file);
  } finally {
    await store.close();
  }
  return file;
}

/** Read once per suite: PGlite only reads the dump, so every store of the suite can start from the same one. */
const templates = new Map<string, Blob>();

function templateFrom(env: string): Blob | undefined {
  const file = process.env[env];
  if (!file) return undefined;
  if (!templates.has(file)) templates.set(file, new Blob([readFileSync(file)]));
  return templates.get(file);
}

/** The empty template for `openStore`'s loadDataDir when globalSetup made one (jest); else none (initdb). */
export function pgliteTemplate(): Blob | undefined {
  return templateFrom(PGLITE_TEMPLATE_ENV);
}

/** The migrated template when globalSetup made one, else the empty one (the store then migrates it). */
export function migratedPgliteTemplate(): Blob | undefined {
  return templateFrom(PGLITE_MIGRATED_TEMPLATE_ENV) ?? pgliteTemplate();
}
