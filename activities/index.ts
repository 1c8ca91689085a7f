import type { ActivityDeps } from '../src/runtime/deps';
import { createTurnActivities } from './turn-activities';
import { createToolActivities } from './tool-activities';
import { createCompactionActivities } from './compaction-activities';
import { createMemoryActivities } from './memory-activities';
import { createMaintenanceActivities } from './maintenance-activities';

/** Every activity the Keel worker registers, bound to its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createTurnActivities(deps),
    ...createToolActivities(deps),
    ...createCompactionActivities(deps),
    ...createMemoryActivities(deps),
    ...createMaintenanceActivities(deps),
  };
}
