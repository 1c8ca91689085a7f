/**
 * The phases of each Update in a workflow's history, from the server's event timestamps: the Update's
 * workflow task, its activity (scheduled → started → completed), the workflow task that completes it.
 * Keel turns and the bare baseline have the same events per turn, so phase by phase they compare.
 */

/** One history event: its type without the `EVENT_TYPE_` prefix, and its time in ms. */
export interface TimedEvent {
  readonly type: string;
  readonly atMs: number;
}

export const PHASES = [
  "workflow task 1 (the Update's activation)",
  'activity scheduled → started',
  'activity started → completed',
  'activity completed → workflow task 2 started',
  "workflow task 2 (the reply's activation)",
  'the whole Update, server side',
] as const;
export type Phase = (typeof PHASES)[number];

/**
 * Phase durations (ms) of each Update after the first `skip`, for Updates whose handler ran exactly
 * one activity before completing (others are left out: a turn with tool rounds is another shape).
 */
export function updatePhases(events: readonly TimedEvent[], skip = 0): Array<Record<Phase, number>> {
  const out: Array<Record<Phase, number>> = [];
  const next = (type: string, from: number) => events.findIndex((e, j) => j >= from && e.type === type);
  let seen = 0;
  for (let i = 0; i < events.length; i++) {
    if (events[i]!.type !== 'WORKFLOW_EXECUTION_UPDATE_ACCEPTED') continue;
    if (seen++ < skip) continue;
    // The Update is accepted by the workflow task that ran its handler: the three events before it.
    const [scheduled, started, completed] = [events[i - 3], events[i - 2], events[i - 1]];
    if (
      scheduled?.type !== 'WORKFLOW_TASK_SCHEDULED' ||
      started?.type !== 'WORKFLOW_TASK_STARTED' ||
      completed?.type !== 'WORKFLOW_TASK_COMPLETED'
    )
      continue;
    const done = next('WORKFLOW_EXECUTION_UPDATE_COMPLETED', i);
    const aScheduled = next('ACTIVITY_TASK_SCHEDULED', i);
    if (done < 0 || aScheduled < 0 || aScheduled > done) continue;
    const another = next('ACTIVITY_TASK_SCHEDULED', aScheduled + 1);
    if (another >= 0 && another < done) continue;
    const aStarted = next('ACTIVITY_TASK_STARTED', aScheduled);
    const aCompleted = next('ACTIVITY_TASK_COMPLETED', aStarted);
    const wft2Started = next('WORKFLOW_TASK_STARTED', aCompleted);
    const wft2Completed = next('WORKFLOW_TASK_COMPLETED', wft2Started);
    if ([aStarted, aCompleted, wft2Started, wft2Completed].some((k) => k < 0 || k > done)) continue;
    const at = (k: number) => events[k]!.atMs;
    out.push({
      [PHASES[0]]: completed.atMs - started.atMs,
      [PHASES[1]]: at(aStarted) - at(aScheduled),
      [PHASES[2]]: at(aCompleted) - at(aStarted),
      [PHASES[3]]: at(wft2Started) - at(aCompleted),
      [PHASES[4]]: at(wft2Completed) - at(wft2Started),
      [PHASES[5]]: at(done) - scheduled.atMs,
    } as Record<Phase, number>);
  }
  return out;
}
