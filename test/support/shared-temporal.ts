/**
 * One Temporal dev server per jest worker, shared by the suites that worker runs one after another,
 * each suite in a namespace of its own: workflow ids (`keel-session/<agent>/<key>`, agent task ids)
 * repeat across suites, and a workflow one suite left running must never answer another's start.
 *
 * A suite's own server cost ~1.4 s to start and ~1 s to stop, in each of ~70 suites. The worker starts
 * its server lazily (a run of unit suites starts none) with a pool of namespaces registered up front,
 * as a namespace registered later is not served until the frontend's namespace cache refreshes. The
 * server's address and how many namespaces are claimed live in a file per jest worker under the run's
 * folder, since jest gives each test file fresh modules and a fresh `process.env`. globalTeardown stops
 * every server the run started; globalSetup stops those a killed run left behind.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer } from '../../src/temporal/dev-server';

/** Set by globalSetup for every test worker: the run's folder, holding one file per worker's server. */
export const TEST_RUN_DIR_ENV = 'KEEL_TEST_RUN_DIR';

/**
 * Namespaces a shared server registers at start; the suite after the last one gets a fresh server.
 * Enough for a worker's share of a run with few restarts, and a restart bounds what a server holds.
 */
const NAMESPACES_PER_SERVER = 40;

/** Where every run's folder lives: a later run finds those whose jest process is gone. */
const RUNS_ROOT = join(tmpdir(), 'keel-test-runs');

/** What a worker's file records about its server. */
interface SharedServerRecord {
  readonly pid: number;
  readonly address: string;
  /** Namespaces handed out so far: `keel-suite-1` … `keel-suite-<claimed>`. */
  readonly claimed: number;
}

/** A suite's share of a worker's server. */
export interface SharedNamespace {
  readonly address: string;
  readonly pid: number;
  readonly namespace: string;
}

/** Makes this run's folder (globalSetup) after stopping the servers of runs whose jest process is gone. */
export function prepareTestRunDir(): string {
  mkdirSync(RUNS_ROOT, { recursive: true });
  for (const name of readdirSync(RUNS_ROOT)) {
    const owner = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (!owner || isAlive(owner)) continue;
    stopRecordedServers(join(RUNS_ROOT, name));
  }
  const dir = join(RUNS_ROOT, `run-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Stops every server recorded in `dir` and removes it (globalTeardown, and the sweep of dead runs). */
export function stopRecordedServers(dir: string): number {
  if (!existsSync(dir)) return 0;
  let stopped = 0;
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    const record = readRecord(join(dir, name));
    if (record && isTemporalServer(record.pid)) {
      killGroup(record.pid, 'SIGKILL');
      stopped++;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return stopped;
}

/**
 * A fresh namespace on this jest worker's shared server, starting the server when there is none, it
 * died, or its namespaces are used up. Undefined outside a jest run (a bench or a script): the caller
 * starts a server of its own.
 */
export async function claimSharedNamespace(): Promise<SharedNamespace | undefined> {
  const dir = process.env[TEST_RUN_DIR_ENV];
  if (!dir) return undefined;
  const file = join(dir, `worker-${process.env.JEST_WORKER_ID ?? '1'}.json`);
  let record = readRecord(file);
  if (record && (record.claimed >= NAMESPACES_PER_SERVER || !isAlive(record.pid))) {
    // In memory, with no suite left on it: nothing to drain.
    if (isTemporalServer(record.pid)) killGroup(record.pid, 'SIGKILL');
    record = undefined;
  }
  record ??= await startSharedServer();
  const claimed = { ...record, claimed: record.claimed + 1 };
  writeRecord(file, claimed);
  return { address: claimed.address, pid: claimed.pid, namespace: suiteNamespace(claimed.claimed) };
}

async function startSharedServer(): Promise<SharedServerRecord> {
  const namespaces = Array.from({ length: NAMESPACES_PER_SERVER }, (_, i) => suiteNamespace(i + 1));
  const server = await startDevServer({ log: () => {}, namespaces });
  return { pid: server.pid, address: server.address, claimed: 0 };
}

function suiteNamespace(n: number): string {
  return `keel-suite-${n}`;
}

function readRecord(file: string): SharedServerRecord | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as SharedServerRecord;
}

function writeRecord(file: string, record: SharedServerRecord): void {
  // Renamed into place: teardown never reads half a file.
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, JSON.stringify(record));
  renameSync(partial, file);
}

/** The server runs in its own process group (startDevServer detaches it). */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A recorded pid the OS may since have given to another process: only a Temporal CLI is killed. */
function isTemporalServer(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('start-dev');
  } catch {
    // No /proc (not Linux): trust the record.
    return true;
  }
}
