import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { ActivityDeps } from '../src/runtime/deps';
import { createActivities } from '../activities';
import { DEFAULTS } from '../src/config/defaults';
import { createSessionSignals } from '../src/client/session-signals';

export interface KeelWorkerOptions {
  readonly connection: NativeConnection;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly deps: ActivityDeps;
  /** A prebuilt bundle (tests build one per suite); otherwise the worker bundles `workflows/`. */
  readonly workflowBundle?: WorkerOptions['workflowBundle'];
  /** In-flight activities (a streaming model call) may finish this long after shutdown starts. */
  readonly shutdownGraceMs?: number;
}

/** A Temporal worker that runs Keel's workflows and activities. */
export async function createKeelWorker(opts: KeelWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve('../workflows') }),
    // Activities reach other sessions (subagent announces, steering, kill) over the worker's own connection.
    activities: createActivities({ ...opts.deps, sessions: opts.deps.sessions ?? createSessionSignals(opts.connection, opts.namespace, opts.taskQueue) }),
    // A deploy lets a model call that is already streaming finish instead of cancelling and re-billing it;
    // the force time bounds shutdown when the Temporal server is gone and polls never return.
    shutdownGraceTime: opts.shutdownGraceMs ?? DEFAULTS.workerShutdownGraceMs,
    shutdownForceTime: (opts.shutdownGraceMs ?? DEFAULTS.workerShutdownGraceMs) + DEFAULTS.workerShutdownForceExtraMs,
  });
}
