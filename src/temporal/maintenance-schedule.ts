import { Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { MAINTENANCE_SCHEDULE_ID, MAINTENANCE_WORKFLOW_TYPE, type MaintenanceRunInput } from '../protocol';

export interface MaintenanceScheduleOptions {
  readonly taskQueue: string;
  /** Default every 6 hours. */
  readonly intervalMs?: number;
  readonly mode?: MaintenanceRunInput['mode'];
}

/**
 * Creates the maintenance Schedule unless it exists (every worker calls this on start; the first one
 * wins, the rest find it). Runs never overlap: a slow run makes the next one wait.
 * @returns true when this call created it.
 */
export async function ensureMaintenanceSchedule(client: Client, opts: MaintenanceScheduleOptions): Promise<boolean> {
  try {
    await client.schedule.create({
      scheduleId: MAINTENANCE_SCHEDULE_ID,
      spec: { intervals: [{ every: opts.intervalMs ?? 6 * 60 * 60_000 }] },
      action: {
        type: 'startWorkflow',
        workflowType: MAINTENANCE_WORKFLOW_TYPE,
        taskQueue: opts.taskQueue,
        args: [{ mode: opts.mode ?? 'warn' }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
    return true;
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) return false;
    throw err;
  }
}
