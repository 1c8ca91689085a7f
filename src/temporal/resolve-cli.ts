import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The Temporal CLI release Keel builds when nothing else is available (its go.mod has no replace directive). */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const GO_PACKAGE = 'github.com/temporalio/cli/cmd/temporal';

/** Where the CLI came from; `not-found`: none was found or built (callers fail with how to get one). */
export type ResolvedCli = { source: 'env' | 'path' | 'cache' | 'go-build'; path: string } | { source: 'not-found' };

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** People-text goes here (stderr by default). */
  log?: (line: string) => void;
  /** Don't build with Go; report `not-found` instead (for quick probes). */
  noBuild?: boolean;
}

/** `$KEEL_CACHE_DIR`, else `$XDG_CACHE_HOME/keel`, else `~/.cache/keel`: shared by every clone and CI run. */
export function keelCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KEEL_CACHE_DIR) return env.KEEL_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'keel');
}

export function cachedCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(keelCacheDir(env), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Finds the Temporal CLI: `TEMPORAL_CLI_PATH` → `temporal` on PATH → the cached build →
 * `go install` into the cache (minutes, cold) → `not-found` (the caller explains).
 */
export async function resolveTemporalCli(opts: ResolveOptions = {}): Promise<ResolvedCli> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  if (env.TEMPORAL_CLI_PATH) {
    if (!isExecutable(env.TEMPORAL_CLI_PATH)) {
      throw new Error(
        `TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not an executable file; unset it or point it at a temporal binary`,
      );
    }
    return { source: 'env', path: env.TEMPORAL_CLI_PATH };
  }
  const fromPath = onPath('temporal', env);
  if (fromPath) return { source: 'path', path: fromPath };
  const cached = cachedCliPath(env);
  if (isExecutable(cached)) return { source: 'cache', path: cached };
  if (!opts.noBuild && onPath('go', env)) {
    await goInstall(cached, env, log);
    return { source: 'go-build', path: cached };
  }
  log('temporal CLI: not found and no Go toolchain: set TEMPORAL_CLI_PATH or install Go');
  return { source: 'not-found' };
}

/** Builds the CLI with `go install` into the cache folder, printing a heartbeat while it runs. */
async function goInstall(target: string, env: NodeJS.ProcessEnv, log: (l: string) => void): Promise<void> {
  const binDir = join(target, '..');
  mkdirSync(binDir, { recursive: true });
  const goEnv = spawnSync('go', ['env', 'GOPROXY', 'GOSUMDB'], { env, encoding: 'utf8' }).stdout.trim().split('\n');
  log(
    `temporal CLI: building ${GO_PACKAGE}@${TEMPORAL_CLI_VERSION} with go install (GOPROXY=${goEnv[0]}, GOSUMDB=${goEnv[1]}) into ${binDir}`,
  );
  log('temporal CLI: the first build takes a few minutes; later runs reuse it');
  const started = Date.now();
  const child = spawn('go', ['install', `${GO_PACKAGE}@${TEMPORAL_CLI_VERSION}`], {
    env: { ...env, GOBIN: binDir, CGO_ENABLED: env.CGO_ENABLED ?? '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
  });
  const alive = setInterval(
    () => log(`temporal CLI: still building (${Math.round((Date.now() - started) / 1000)} s)`),
    15_000,
  );
  const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  clearInterval(alive);
  if (code !== 0 || !existsSync(target)) {
    throw new Error(`go install ${GO_PACKAGE}@${TEMPORAL_CLI_VERSION} failed (exit ${code}):\n${stderr.slice(-4000)}`);
  }
  log(`temporal CLI: built in ${Math.round((Date.now() - started) / 1000)} s → ${target}`);
}
