/** `keel subagents` as people read it (the operations are in src/operations/subagents). */
import type { SubagentListing } from '../operations/subagents/subagents';
import { SubagentNotFoundError } from '../operations/errors';
import { UsageError } from './connect';

/** The runs, two lines each, on stderr. */
export function renderSubagents(subagents: readonly SubagentListing[]): void {
  if (subagents.length === 0) process.stderr.write('no subagent runs\n');
  for (const s of subagents) {
    const task = s.task.replace(/\s+/g, ' ');
    process.stderr.write(
      `${s.id}  ${s.status.padEnd(7)} ${s.mode.padEnd(7)} ${s.parentSessionKey} → ${s.childSessionKey}${s.label ? `  "${s.label}"` : ''}\n    ${task.length > 100 ? `${task.slice(0, 100)}…` : task}\n`,
    );
  }
}

/** On the command line a run id the agent does not have is a usage mistake (exit code 2, with the help hint). */
export async function asUsage<T>(run: Promise<T>): Promise<T> {
  return run.catch((err: unknown) => {
    throw err instanceof SubagentNotFoundError ? new UsageError(err.message) : err;
  });
}
