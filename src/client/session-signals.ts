import { Client, WorkflowNotFoundError, type ConnectionLike, type DataConverter } from '@temporalio/client';
import { enqueueSignal, type SessionWorkflowInput } from '../protocol';
import { sessionWorkflowId } from '../sessions/session-key';
import type { SessionSignals } from '../runtime/deps';

/**
 * Session signals over a worker's own connection (a NativeConnection serves a Client too), through
 * the worker's data converter (`keelDataConverter`: encrypted when keys are configured).
 */
export function createSessionSignals(connection: ConnectionLike, namespace: string, taskQueue: string, dataConverter?: DataConverter): SessionSignals {
  const client = new Client({ connection, namespace, ...(dataConverter ? { dataConverter } : {}) });
  return {
    async enqueue(target, request) {
      const input: SessionWorkflowInput = { agentId: target.agentId, sessionKey: target.sessionKey, ...(target.tuning ? { tuning: target.tuning } : {}) };
      await client.workflow.signalWithStart('sessionWorkflow', {
        workflowId: sessionWorkflowId(target.agentId, target.sessionKey),
        taskQueue,
        args: [input],
        signal: enqueueSignal,
        signalArgs: [request],
      });
    },
    async cancel(workflowId) {
      try {
        await client.workflow.getHandle(workflowId).cancel();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },
  };
}
