import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { ActivityDeps } from '../src/runtime/deps';
import { createActivities } from '../activities';

export interface KeelWorkerOptions {
  readonly connection: NativeConnection;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly deps: ActivityDeps;
  /** A prebuilt bundle (tests build one per suite); otherwise the worker bundles `workflows/`. */
  readonly workflowBundle?: WorkerOptions['workflowBundle'];
}

/** A Temporal worker that runs Keel's workflows and activities. */
export async function createKeelWorker(opts: KeelWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities(opts.deps),
  });
}
