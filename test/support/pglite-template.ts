/**
 * An empty PGlite data folder, initialised once and handed to every in-memory store a suite opens.
 * PGlite.create runs initdb inside WebAssembly: ~3 s of CPU here, against ~0.8 s to load the same
 * folder from a dump, and the suites open several hundred such stores a run. Made by jest's
 * globalSetup under node_modules/.cache, named by PGlite's version (its initdb's output).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

const NODE_MODULES = join(__dirname, '..', '..', 'node_modules');
const CACHE = join(NODE_MODULES, '.cache', 'keel-pglite');
/** Set by globalSetup for every test worker: the dump's file. */
export const PGLITE_TEMPLATE_ENV = 'KEEL_TEST_PGLITE_TEMPLATE';

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

/** Read once per suite: PGlite only reads the dump, so every store of the suite can start from the same one. */
let template: Blob | undefined;

/** The template for `openStore`'s loadDataDir when globalSetup made one (jest); else none (initdb). */
export function pgliteTemplate(): Blob | undefined {
  const file = process.env[PGLITE_TEMPLATE_ENV];
  if (!file) return undefined;
  template ??= new Blob([readFileSync(file)]);
  return template;
}
