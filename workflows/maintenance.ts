import { proxyActivities } from '@temporalio/workflow';
import type { createMaintenanceActivities } from '../activities/maintenance-activities';
import type { MaintenanceRunInput, MaintenanceRunSummary } from '../src/protocol';

// Deleting many rows can take minutes on a big fleet; retries are safe (deletes are idempotent).
const { maintainSessions } = proxyActivities<ReturnType<typeof createMaintenanceActivities>>({
  startToCloseTimeout: '30m',
  retry: { initialInterval: '10s', maximumAttempts: 5 },
});

/** Session maintenance, started by the `keel-maintenance` Schedule or on demand. */
export async function maintenanceWorkflow(input: Omit<MaintenanceRunInput, 'now'>): Promise<MaintenanceRunSummary> {
  return maintainSessions({ ...input, now: new Date().toISOString() });
}
