import { Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { MAINTENANCE_SCHEDULE_ID, MAINTENANCE_WORKFLOW_TYPE, type MaintenanceRunInput } from '../protocol';

export interface MaintenanceScheduleOptions {
  readonly taskQueue: string;
  /** Default every 6 hours. */
  readonly intervalMs?: number;
  /** The configured `maintenanceMode` (default warn). */
  readonly mode?: MaintenanceRunInput['mode'];
}

/** What `ensureMaintenanceSchedule` did. */
export type MaintenanceScheduleOutcome = 'created' | 'mode changed' | 'unchanged';

/**
 * Creates the maintenance Schedule unless it exists (every worker calls this on start; the first one
 * wins, the rest find it). A Schedule that runs in another mode than the configured one is switched
 * to it, so changing `maintenanceMode` and restarting a worker takes effect. Runs never overlap: a
 * slow run makes the next one wait.
 */
export async function ensureMaintenanceSchedule(
  client: Client,
  opts: MaintenanceScheduleOptions,
): Promise<MaintenanceScheduleOutcome> {
  const mode = opts.mode ?? 'warn';
  try {
    await client.schedule.create({
      scheduleId: MAINTENANCE_SCHEDULE_ID,
      spec: { intervals: [{ every: opts.intervalMs ?? 6 * 60 * 60_000 }] },
      action: {
        type: 'startWorkflow',
        workflowType: MAINTENANCE_WORKFLOW_TYPE,
        taskQueue: opts.taskQueue,
        args: [{ mode }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(MAINTENANCE_SCHEDULE_ID);
  const { action } = await handle.describe();
  const current = (action.args?.[0] as Partial<MaintenanceRunInput> | undefined)?.mode ?? 'warn';
  if (current === mode) return 'unchanged';
  await handle.update((schedule) => ({
    ...schedule,
    action: { ...schedule.action, args: [{ ...(schedule.action.args?.[0] as object | undefined), mode }] },
  }));
  return 'mode changed';
}
