/** Every workflow the Keel worker registers. */
export { sessionWorkflow } from './session';
export { compactionWorkflow } from './compaction';
export { maintenanceWorkflow } from './maintenance';
