import { bundleWorkflowCode, DefaultLogger, Worker, type NativeConnection } from '@temporalio/worker';
import { createBaselineActivities, type TurnIoFloor } from './activities';

/** A running baseline worker and how to stop it (waits for shutdown). */
export interface BaselineWorker {
  stop(): Promise<void>;
}

/**
 * Bundles bench/baseline/workflows.ts (separately from Keel's bundle) and runs a worker for it on
 * `taskQueue`, on the same server connection the Keel worker uses.
 */
export async function startBaselineWorker(
  connection: NativeConnection,
  taskQueue: string,
  opts: { maxCachedWorkflows?: number; floor?: TurnIoFloor } = {},
): Promise<BaselineWorker> {
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./workflows'),
    logger: new DefaultLogger('WARN'),
  });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowBundle,
    activities: createBaselineActivities(opts.floor),
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
  });
  const running = worker.run();
  return {
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
