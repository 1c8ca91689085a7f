import type { ActivityDeps } from '../src/runtime/deps';
import { createTurnActivities } from './turn-activities';
import { createToolActivities } from './tool-activities';
import { createCompactionActivities } from './compaction-activities';
import { createMemoryActivities } from './memory-activities';
import { createMaintenanceActivities } from './maintenance-activities';
import { withDataErrors } from './parts/data-errors';
import { withBoundedFailures } from './parts/bounded-failures';
import { withOutageWait } from './parts/outage-wait';
import { COMPACTION_STORE_STEPS, withLivenessHeartbeat } from './parts/liveness-heartbeat';
import { databaseAnswers } from '../src/store/database-answers';
import { DEFAULTS } from '../src/config/defaults';
import { withAllowedAgents } from './parts/allowed-agents';
import { withBuiltinTools } from './parts/builtin-tools';
import { createSubagentActivities } from './subagent-activities';
import { createApprovalActivities } from './approval-activities';
import { ReceivedReplies } from './parts/received-replies';
import { withContextEngines } from './parts/context-engine';

/**
 * Every activity the Keel worker registers, bound to its dependencies; a database outage is waited
 * out inside the attempt; data errors never retry; other agents than `allowedAgents` are refused;
 * a failure leaves small enough for Temporal to keep it whole.
 */
export function createActivities(appDeps: ActivityDeps) {
  // Every agent also has the built-in tools (memory_search) next to the application's.
  // …and this worker's one instance of each agent's context engine.
  const deps = withContextEngines(withBuiltinTools(appDeps));
  // One memo of received replies per worker: every model call's retry on this worker reuses its reply.
  const replies = new ReceivedReplies();
  const activities = withAllowedAgents(
    withDataErrors(
      withOutageWait(
        {
          ...createTurnActivities(deps, replies),
          ...createToolActivities(deps),
          ...withLivenessHeartbeat(
            createCompactionActivities(deps, replies),
            COMPACTION_STORE_STEPS,
            DEFAULTS.storeHeartbeatIntervalMs,
          ),
          ...createMemoryActivities(deps, replies),
          ...createMaintenanceActivities(deps),
          ...createSubagentActivities(deps),
          ...createApprovalActivities(deps),
        },
        {
          databaseAnswers: () => databaseAnswers(appDeps.db, DEFAULTS.databaseProbeTimeoutMs),
          probeIntervalMs: DEFAULTS.outageProbeIntervalMs,
          maxWaitMs: DEFAULTS.outageWaitMs,
        },
      ),
    ),
    appDeps.config.allowedAgents,
  );
  return withBoundedFailures(activities, DEFAULTS.activityFailureBounds);
}
