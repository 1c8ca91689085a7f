import * as wf from '@temporalio/workflow';
import type { createTurnActivities } from '../activities/turn-activities';
import type { createToolActivities } from '../activities/tool-activities';
import type { createMemoryActivities } from '../activities/memory-activities';
import type { createSubagentActivities } from '../activities/subagent-activities';
import type { createApprovalActivities } from '../activities/approval-activities';

type TurnActivities = ReturnType<typeof createTurnActivities>;
type ToolActivities = ReturnType<typeof createToolActivities>;
type MemoryActivities = ReturnType<typeof createMemoryActivities>;
type SubagentActivities = ReturnType<typeof createSubagentActivities>;
type ApprovalActivities = ReturnType<typeof createApprovalActivities>;

/** Short database steps, run as local activities: retried with a bound in time (a data error is non-retryable). */
export const localActivities = wf.proxyLocalActivities<
  TurnActivities & MemoryActivities & SubagentActivities & ApprovalActivities & Pick<ToolActivities, 'storeToolFailure'>
>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: '10m',
  retry: { initialInterval: '200ms', maximumInterval: '5s' },
});
