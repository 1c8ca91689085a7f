import { PHASES, updatePhases, type TimedEvent } from '../../bench/support/update-phases';

/** One Update's events at the given times (ms): task 1, the activity, task 2, completed. */
function update(t: number[], activities = 1): TimedEvent[] {
  const [s1, st1, c1, aSched, aStart, aDone, s2, st2, c2, done] = t as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const extra: TimedEvent[] =
    activities > 1
      ? [
          { type: 'ACTIVITY_TASK_SCHEDULED', atMs: aDone },
          { type: 'ACTIVITY_TASK_STARTED', atMs: aDone },
          { type: 'ACTIVITY_TASK_COMPLETED', atMs: aDone },
        ]
      : [];
  return [
    { type: 'WORKFLOW_TASK_SCHEDULED', atMs: s1 },
    { type: 'WORKFLOW_TASK_STARTED', atMs: st1 },
    { type: 'WORKFLOW_TASK_COMPLETED', atMs: c1 },
    { type: 'WORKFLOW_EXECUTION_UPDATE_ACCEPTED', atMs: c1 },
    { type: 'ACTIVITY_TASK_SCHEDULED', atMs: aSched },
    { type: 'ACTIVITY_TASK_STARTED', atMs: aStart },
    { type: 'ACTIVITY_TASK_COMPLETED', atMs: aDone },
    ...extra,
    { type: 'WORKFLOW_TASK_SCHEDULED', atMs: s2 },
    { type: 'WORKFLOW_TASK_STARTED', atMs: st2 },
    { type: 'WORKFLOW_TASK_COMPLETED', atMs: c2 },
    { type: 'WORKFLOW_EXECUTION_UPDATE_COMPLETED', atMs: done },
  ];
}

describe('updatePhases', () => {
  it('splits each Update into its workflow tasks and its activity, after the warm-up ones', () => {
    const events: TimedEvent[] = [
      { type: 'WORKFLOW_EXECUTION_STARTED', atMs: 0 },
      ...update([10, 11, 14, 14, 14, 24, 24, 25, 28, 28]),
      ...update([100, 100.5, 103, 103, 103.25, 110, 111, 112, 115, 115]),
    ];
    expect(updatePhases(events, 1)).toEqual([
      { [PHASES[0]]: 2.5, [PHASES[1]]: 0.25, [PHASES[2]]: 6.75, [PHASES[3]]: 2, [PHASES[4]]: 3, [PHASES[5]]: 15 },
    ]);
    expect(updatePhases(events)).toHaveLength(2);
  });

  it('leaves out an Update whose handler ran more than one activity (a turn with a tool round)', () => {
    const events = [...update([0, 1, 2, 2, 2, 5, 5, 6, 7, 7], 2), ...update([10, 11, 12, 12, 12, 15, 15, 16, 17, 17])];
    expect(updatePhases(events).map((p) => p[PHASES[5]])).toEqual([7]);
  });
});
