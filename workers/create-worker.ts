import { NativeConnection, Runtime, Worker, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import type { ActivityDeps } from '../src/runtime/deps';
import { createActivities } from '../activities';
import { DEFAULTS } from '../src/config/defaults';
import { createSessionSignals } from '../src/client/session-signals';
import { sessionLogAttributes } from './activity-log-attributes';
import { keelSinks } from './keel-sinks';
import { keyRingFor } from '../src/config/keel-config';
import { keelDataConverter } from '../src/security/payload-codec';
import { prebuiltWorkflowBundle } from './workflow-bundles';

export interface KeelWorkerOptions {
  readonly connection: NativeConnection;
  readonly namespace: string;
  readonly taskQueue: string;
  /** Activity deps; `deps.metrics` (when set) also receives the turn histogram from the workflows' sink. */
  readonly deps: ActivityDeps;
  /**
   * A prebuilt bundle (tests build one per suite); otherwise the worker bundles `workflows/`. With
   * encryption keys configured, build it with `failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH`
   * so failures raised in workflow code are encoded too.
   */
  readonly workflowBundle?: WorkerOptions['workflowBundle'];
  /** In-flight activities (a streaming model call) may finish this long after shutdown starts. */
  readonly shutdownGraceMs?: number;
  /** Worker plugins, e.g. OpenTelemetry tracing (its workflow interceptors need the worker to bundle `workflows/`). */
  readonly plugins?: WorkerPlugin[];
}

/** A Temporal worker that runs Keel's workflows and activities. */
export async function createKeelWorker(opts: KeelWorkerOptions): Promise<Worker> {
  // KEEL_ENCRYPTION_KEYS set → every payload this worker writes is encrypted (docs/security.md).
  const dataConverter = keelDataConverter(keyRingFor(opts.deps.config));
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    ...workflowCode(opts, dataConverter !== undefined),
    // Activities reach other sessions (subagent announces, steering, kill) over the worker's own connection.
    ...(dataConverter ? { dataConverter } : {}),
    activities: createActivities({
      ...opts.deps,
      sessions:
        opts.deps.sessions ?? createSessionSignals(opts.connection, opts.namespace, opts.taskQueue, dataConverter),
    }),
    // Sessions stay sticky between turns (no replay per turn) up to this many; deliberate, not the SDK's memory-based guess.
    maxCachedWorkflows: opts.deps.config.maxCachedWorkflows,
    // A killed worker's sessions go to another worker after this, not the SDK's 10 s.
    stickyQueueScheduleToStartTimeout: DEFAULTS.stickyQueueScheduleToStartTimeoutMs,
    // Every activity log line names the agent and session it works for.
    interceptors: { activity: [sessionLogAttributes] },
    // The `turn` line and the turn histogram, from the workflows' step timings (never on replay).
    sinks: keelSinks(Runtime.instance().logger, opts.deps.metrics),
    ...(opts.plugins?.length ? { plugins: opts.plugins } : {}),
    // A deploy lets a model call that is already streaming finish instead of cancelling and re-billing it;
    // the force time bounds shutdown when the Temporal server is gone and polls never return.
    shutdownGraceTime: opts.shutdownGraceMs ?? DEFAULTS.workerShutdownGraceMs,
    shutdownForceTime: (opts.shutdownGraceMs ?? DEFAULTS.workerShutdownGraceMs) + DEFAULTS.workerShutdownForceExtraMs,
  });
}

/**
 * The bundle given, else the one `npm run build` wrote beside the code, else `workflows/` for the
 * worker to bundle itself. Plugins (tracing) add workflow interceptors at bundle time, so a worker
 * with plugins always bundles itself.
 */
function workflowCode(
  opts: KeelWorkerOptions,
  encrypted: boolean,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  if (opts.workflowBundle) return { workflowBundle: opts.workflowBundle };
  const logger = Runtime.instance().logger;
  if (opts.plugins?.length) {
    logger.info('keel worker: bundling workflows/ (plugins add workflow interceptors)');
    return { workflowsPath: require.resolve('../workflows') };
  }
  const prebuilt = prebuiltWorkflowBundle(encrypted ? 'encoded-failures' : 'plain');
  if ('bundle' in prebuilt) {
    logger.info(`keel worker: workflow bundle ${prebuilt.file}`);
    return { workflowBundle: prebuilt.bundle };
  }
  logger.info(`keel worker: bundling workflows/ (${prebuilt.why})`);
  return { workflowsPath: require.resolve('../workflows') };
}
