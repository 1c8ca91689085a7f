import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';

/**
 * `<KEEL_HOME>/stack.json`: how other processes reach a running embedded stack (`keel dev`). The
 * stack writes it once everything serves and removes it on a clean stop; a file whose process is
 * gone is stale and ignored.
 */
const StackStateSchema = z.object({
  pid: z.number().int().positive(),
  startedAt: z.string(),
  temporalAddress: z.string().min(1),
  /** The embedded PGlite served over the PostgreSQL wire protocol; absent when the stack uses DATABASE_URL. */
  databaseUrl: z.string().min(1).optional(),
  /** The PGlite folder the stack owns. */
  dataDir: z.string().optional(),
  /** The Temporal dev server the stack started (absent with TEMPORAL_ADDRESS): stopped with the stack. */
  temporalPid: z.number().int().positive().optional(),
});
export type StackState = z.infer<typeof StackStateSchema>;

export function stackStatePath(home: string): string {
  return resolve(home, 'stack.json');
}

/** Written to a temporary name first, so a reader never sees half a file. */
export function writeStackState(home: string, state: StackState): void {
  const path = stackStatePath(home);
  writeFileSync(`${path}.${state.pid}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${path}.${state.pid}.tmp`, path);
}

/** Removes the state file if it is still this process's (a successor may have taken over). */
export function removeStackState(home: string, pid = process.pid): void {
  if (readStackState(home)?.pid === pid) rmSync(stackStatePath(home), { force: true });
}

/** The stack running under `home`, or undefined when there is none or its process is gone. */
export function runningStack(home: string): StackState | undefined {
  const state = readStackState(home);
  return state && processAlive(state.pid) ? state : undefined;
}

function readStackState(home: string): StackState | undefined {
  let text: string;
  try {
    text = readFileSync(stackStatePath(home), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = StackStateSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // torn or hand-edited: as good as absent
  }
}

/** Signal 0 checks that the process exists; EPERM means it exists under another user. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
