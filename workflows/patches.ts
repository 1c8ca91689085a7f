/**
 * The patch ids workflow code branches on (`wf.patched`), each with what changed and when it is
 * retired (docs/patches.md). Nothing else lives here: the determinism test reads every export as a
 * live patch, and today's histories may hold these markers and no others.
 */

/**
 * A spawned subagent starts as `subagentWorkflow`; a parent whose history started its subagents as
 * `sessionWorkflow` (0.1.0) keeps doing so, and `sessionWorkflow` still runs them. Retire after the
 * release that ships it is the oldest one in test/determinism/releases/.
 */
export const SUBAGENT_OWN_WORKFLOW_TYPE = 'subagent-own-workflow-type';

/**
 * `runAgentTask` starts its task as `agentTaskWorkflow`; a caller whose history started tasks as
 * `sessionWorkflow` (0.1.0) keeps doing so, and `sessionWorkflow` still runs them. Retire after the
 * release that ships it is the oldest one in test/determinism/releases/.
 */
export const AGENT_TASK_OWN_WORKFLOW_TYPE = 'agent-task-own-workflow-type';
