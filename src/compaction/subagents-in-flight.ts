/**
 * The compaction summary's "Subagents in flight" section: the subagents still running when the
 * conversation was compacted, so the agent waits for their results instead of spawning them again.
 * Written fresh at every compaction (the previous one's list is stripped before re-summarizing, as
 * runs it named may have ended since).
 */

export const SUBAGENTS_IN_FLIGHT_HEADING = '## Subagents in flight';

/** Characters of a task the section keeps (the child has the full task). */
const TASK_CHARS = 200;
/** Runs listed; the rest are counted. */
const MAX_LISTED = 20;

export interface SubagentInFlight {
  readonly id: string;
  readonly task: string;
  readonly status: string;
  readonly child_session_key: string;
}

/** `summary` without a "Subagents in flight" section (up to the next `## ` heading). */
export function withoutSubagentsInFlight(summary: string): string {
  const start = summary.startsWith(SUBAGENTS_IN_FLIGHT_HEADING)
    ? 0
    : summary.indexOf(`\n${SUBAGENTS_IN_FLIGHT_HEADING}\n`);
  if (start < 0) return summary;
  const next = summary.indexOf('\n## ', start + 1 + SUBAGENTS_IN_FLIGHT_HEADING.length);
  const rest = next < 0 ? '' : summary.slice(next + 1);
  return `${summary.slice(0, start).trimEnd()}${rest ? `\n\n${rest}` : ''}`;
}

/** `summary` with the current section at its end (none when no subagent is running). */
export function withSubagentsInFlight(summary: string, runs: readonly SubagentInFlight[]): string {
  const base = withoutSubagentsInFlight(summary).trimEnd();
  if (runs.length === 0) return base;
  const lines = runs
    .slice(0, MAX_LISTED)
    .map((r) => `- ${r.id} (${r.status}, session ${r.child_session_key}): ${truncate(r.task)}`);
  if (runs.length > MAX_LISTED) lines.push(`- and ${runs.length - MAX_LISTED} more`);
  return [
    base,
    '',
    SUBAGENTS_IN_FLIGHT_HEADING,
    'These subagents were still running when the conversation was compacted. Each announces its result to this session when it ends; wait for it and do not spawn them again.',
    ...lines,
  ].join('\n');
}

function truncate(task: string): string {
  const flat = task.replace(/\s+/g, ' ').trim();
  return flat.length <= TASK_CHARS ? flat : `${flat.slice(0, TASK_CHARS - 1)}…`;
}
