/**
 * Tests run `keel` and workers as real processes many times. Under `ts-node` each process spends
 * seconds loading TypeScript and transpiling ~300 files before it does anything; compiled once per
 * source state with swc (no type-check: `tsc --noEmit` does that), a process starts in about a
 * quarter of the time. The output lives under node_modules/.cache so the compiled files resolve the
 * repository's node_modules, and its folder is named by a hash of the sources, so an edit compiles
 * afresh and a stale build is never run.
 */
import { transformFileSync } from '@swc/core';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

import { filesUnder, hashFiles } from '../../workers/file-tree-hash';

const ROOT = join(__dirname, '..', '..');
/** The folders a process entry point can reach (test helpers run in-process, not here), and the benches' baseline worker. */
const SOURCE_DIRS = ['src', 'workers', 'workflows', 'activities', 'bench/baseline'];
const CACHE = join(ROOT, 'node_modules', '.cache', 'keel-compiled');
/** Set by jest's globalSetup for every test worker: the folder holding `<entry>.js` files. */
export const COMPILED_DIR_ENV = 'KEEL_TEST_COMPILED_DIR';

/** Compiles the sources once per content hash and returns the folder; reuses an earlier build of the same sources. */
export function compileEntries(): string {
  const files = SOURCE_DIRS.flatMap((d) =>
    filesUnder(join(ROOT, d), (name) => name.endsWith('.ts') && !name.endsWith('.d.ts')),
  );
  const outDir = join(CACHE, hashFiles(ROOT, files).slice(0, 16));
  if (existsSync(join(outDir, '.complete'))) return outDir;
  // Build beside it and rename: two runs starting together never see half a build.
  const building = `${outDir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  for (const file of files) {
    const { code } = transformFileSync(file, {
      jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
      module: { type: 'commonjs' },
      sourceMaps: 'inline',
    });
    const out = compiledPath(building, relative(ROOT, file));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, code);
  }
  writeFileSync(join(building, '.complete'), '');
  try {
    renameSync(building, outDir);
  } catch {
    // Another run finished the same build first.
    rmSync(building, { recursive: true, force: true });
  }
  removeOldBuilds(outDir);
  return outDir;
}

/** Builds of earlier source states, a day old or more, go (a few MB each). */
function removeOldBuilds(keep: string): void {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const d of readdirSync(CACHE, { withFileTypes: true })) {
    const path = join(CACHE, d.name);
    if (path !== keep && d.isDirectory() && statSync(path).mtimeMs < dayAgo)
      rmSync(path, { recursive: true, force: true });
  }
}

/**
 * The node arguments that run a repository entry point (`workers/keel.ts`): the compiled file when
 * globalSetup built one, else the TypeScript itself under ts-node. A compiled entry registers ts-node
 * only when its environment hands the process a TypeScript module (KEEL_TOOLS_MODULE=
 * test/support/cli-test-tools.ts, say): registering it loads the TypeScript compiler, half a second
 * of every one of the hundreds of processes the tests start.
 */
export function entryArgs(entry: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const compiled = process.env[COMPILED_DIR_ENV];
  if (!compiled) return ['-r', 'ts-node/register', join(ROOT, entry)];
  const loadsTypeScript = Object.values(env).some((v) => v !== undefined && /\.ts$/.test(v));
  return [...(loadsTypeScript ? ['-r', 'ts-node/register'] : []), compiledPath(compiled, entry)];
}

/**
 * The node arguments that run a compiled entry point with nothing else loaded, as `node
 * dist/workers/main.js` runs in production: no ts-node, whose TypeScript compiler would otherwise
 * sit in the process (and in its workflow thread, which inherits the flags). For benches that
 * measure a worker's memory; they compile the entries first.
 */
export function compiledEntryArgs(entry: string): string[] {
  const compiled = process.env[COMPILED_DIR_ENV];
  if (!compiled) throw new Error(`compiledEntryArgs: ${COMPILED_DIR_ENV} is not set (call compileEntries first)`);
  return [compiledPath(compiled, entry)];
}

/** Where compileEntries put the JavaScript of a repository file (`workers/main.ts` → `<dir>/workers/main.js`). */
function compiledPath(dir: string, entry: string): string {
  return join(dir, entry.replace(/\.ts$/, '.js'));
}
