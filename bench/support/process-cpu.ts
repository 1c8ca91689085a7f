/**
 * CPU time by process, from /proc (Linux, where the benches run): what a load phase cost each part
 * of the system. On a small machine the parts share the cores, so CPU per turn summed over them
 * bounds turns per second.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** A process's user + system CPU in ms; 0 once it is gone. */
function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** User + system CPU in ms from a /proc stat file (a process's or one thread's); 0 once it is gone. */
function statCpuMs(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    // Fields after the command (which may hold spaces) in parentheses: utime is the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Every process whose command name is `name` (e.g. PostgreSQL's backends, all named `postgres`). */
function pidsNamed(name: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
      } catch {
        return false;
      }
    });
}

/** The parts measured: a name, and the pids that make it up (read again at each sample). */
export type CpuParts = Record<string, () => readonly number[]>;

/** PostgreSQL's processes on this machine (the bench's server is the only one running here). */
export const postgresPids = (): number[] => pidsNamed('postgres');

/** CPU ms so far of each part, by name. */
export function sampleCpu(parts: CpuParts): Record<string, number> {
  return Object.fromEntries(
    Object.entries(parts).map(([name, pids]) => [name, pids().reduce((ms, pid) => ms + processCpuMs(pid), 0)]),
  );
}

/**
 * CPU ms per operation of each part between two samples. A backend that exited in between loses
 * its time, so PostgreSQL is read with a pool that outlives the phase.
 */
export function cpuPerOp<K extends string>(
  before: Partial<Record<K, number>>,
  after: Record<K, number>,
  ops: number,
): Record<K, number> {
  return Object.fromEntries(
    Object.entries<number>(after).map(([name, ms]) => [
      name,
      Math.round(((ms - (before[name as K] ?? 0)) / ops) * 10) / 10,
    ]),
  ) as Record<K, number>;
}

/** Adds each part's CPU between two samples to `total` (a phase measured in several rounds). */
export function addCpu<K extends string>(
  total: Partial<Record<K, number>>,
  before: Partial<Record<K, number>>,
  after: Record<K, number>,
): void {
  for (const [name, ms] of Object.entries<number>(after))
    total[name as K] = (total[name as K] ?? 0) + ms - (before[name as K] ?? 0);
}

/** How a worker process's CPU splits: its JavaScript main thread, Node's other threads, Temporal's Rust core. */
export interface ThreadCpu {
  /** The main thread: activities, the SDK's worker loop, pg, the model client. */
  readonly main: number;
  /** Node's other threads, all named `node`: the workflow threads, V8's GC helpers, libuv's pool. */
  readonly node: number;
  /** Temporal's Rust core (`tokio-runtime-w…`) and anything else. */
  readonly core: number;
}

/** CPU ms so far of a process's threads by kind (each thread's own stat under /proc/<pid>/task). */
export function sampleThreadCpu(pid: number): ThreadCpu {
  const cpu = { main: 0, node: 0, core: 0 };
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return cpu;
  }
  for (const tid of tids) {
    const ms = statCpuMs(`/proc/${pid}/task/${tid}/stat`);
    if (tid === String(pid)) cpu.main += ms;
    else if (threadName(pid, tid) === 'node') cpu.node += ms;
    else cpu.core += ms;
  }
  return cpu;
}

function threadName(pid: number, tid: string): string {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}
