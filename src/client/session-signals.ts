import {
  Client,
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  type ConnectionLike,
  type DataConverter,
} from '@temporalio/client';
import {
  enqueueSignal,
  steerUpdate,
  type SessionRequest,
  type SessionWorkflowInput,
  type SteerAdmission,
} from '../protocol';
import { isClosedWorkflow } from './closed-workflow';
import { sessionWorkflowId, sessionWorkflowType } from '../sessions/session-key';
import type { SessionSignals } from '../runtime/deps';

/**
 * Session signals over a worker's own connection (a NativeConnection serves a Client too), through
 * the worker's data converter (`keelDataConverter`: encrypted when keys are configured).
 */
export function createSessionSignals(
  connection: ConnectionLike,
  namespace: string,
  taskQueue: string,
  dataConverter?: DataConverter,
): SessionSignals {
  const client = new Client({ connection, namespace, ...(dataConverter ? { dataConverter } : {}) });
  return {
    async enqueue(target, request) {
      const input: SessionWorkflowInput = {
        agentId: target.agentId,
        sessionKey: target.sessionKey,
        ...(target.tuning ? { tuning: target.tuning } : {}),
      };
      await client.workflow.signalWithStart(sessionWorkflowType(target.sessionKey), {
        workflowId: sessionWorkflowId(target.agentId, target.sessionKey),
        taskQueue,
        args: [input],
        signal: enqueueSignal,
        signalArgs: [request],
      });
    },
    async steer(target, request, { startIfClosed }): Promise<SteerAdmission> {
      const workflowId = sessionWorkflowId(target.agentId, target.sessionKey);
      // The request id as the Update's id: a retried steer is the same Update, answered the same.
      const options = { args: [request] as [SessionRequest], updateId: request.requestId };
      try {
        if (!startIfClosed) return await client.workflow.getHandle(workflowId).executeUpdate(steerUpdate, options);
        const input: SessionWorkflowInput = { agentId: target.agentId, sessionKey: target.sessionKey };
        const start = new WithStartWorkflowOperation(sessionWorkflowType(target.sessionKey), {
          workflowId,
          taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
        return await client.workflow.executeUpdateWithStart(steerUpdate, { ...options, startWorkflowOperation: start });
      } catch (err) {
        if (isClosedWorkflow(err)) return { admitted: false, reason: 'its workflow has closed' };
        throw err;
      }
    },
    async cancel(workflowId) {
      try {
        await client.workflow.getHandle(workflowId).cancel();
        return true;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      }
    },
  };
}
