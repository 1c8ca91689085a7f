/** Every workflow the Keel worker registers. */
export { sessionWorkflow } from './session';
export { subagentWorkflow } from './subagent';
export { agentTaskWorkflow } from './agent-task';
export { compactionWorkflow } from './compaction';
export { maintenanceWorkflow } from './maintenance';
