/**
 * Keel worker process: `TEMPORAL_ADDRESS=host:7233 DATABASE_URL=postgres://… npm run worker`.
 * Runs until SIGINT/SIGTERM, then drains in-flight tasks and exits.
 */
import { NativeConnection } from '@temporalio/worker';
import { loadKeelSettings } from '../src/config/agent-config';
import { DEFAULTS } from '../src/config/defaults';
import { validateStartup } from '../src/config/validate-startup';
import { watchDatabaseHealth } from '../src/store/health-watch';
import { openRuntime } from '../src/runtime/activity-deps';
import { createKeelWorker } from './create-worker';
import { prepareCluster } from '../src/temporal/prepare-cluster';
import { exitIfShutdownHangs } from './exit-if-shutdown-hangs';
import { closeWorkspaceWatchers } from '../activities/workspace-cache';
import { installObservability, serveObservability } from './observability';

async function main(): Promise<void> {
  // keel.config.json (KEEL_CONFIG) under the environment: the defaults and one section per agent.
  // pino as Temporal's Runtime logger (JSON; KEEL_LOG_PRETTY=1 for people), metrics and tracing from the environment.
  const obs = installObservability(process.env);
  const settings = loadKeelSettings();
  const config = settings.defaults;
  if (!config.temporalAddress) {
    throw new Error('TEMPORAL_ADDRESS is not set: point it at a Temporal frontend (host:7233), or run `npm run dev` for an embedded stack');
  }
  // No model is allowed: compaction, import and replay work without one (extractive summaries).
  await validateStartup(settings.defaults, { requireModel: false, agents: settings.agents });
  const runtime = await openRuntime({ config, agents: settings.agents });
  const log = (line: string) => obs.logger.info(`keel worker: ${line}`);
  // Turns wait (and retry) while the database is away; the log says when that is.
  const stopWatching = watchDatabaseHealth({ probe: () => runtime.store.healthy(), intervalMs: DEFAULTS.databaseProbeIntervalMs, log });
  try {
    const connection = await NativeConnection.connect({ address: config.temporalAddress });
    try {
      await prepareCluster(config);
      const worker = await createKeelWorker({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: config.taskQueue,
        deps: { ...runtime.deps, ...(obs.metrics ? { metrics: obs.metrics } : {}) },
        shutdownGraceMs: config.shutdownGraceMs,
        plugins: obs.plugins,
      });
      const endpoints = await serveObservability(obs, worker, {
        database: () => runtime.store.healthy(),
        temporal: () => connection.workflowService.getSystemInfo({}).then(() => true),
      });
      exitIfShutdownHangs(config.shutdownGraceMs + DEFAULTS.workerShutdownForceExtraMs + 15_000);
      log(`polling ${config.taskQueue} on ${config.temporalAddress} (pid ${process.pid})`);
      try {
        await worker.run();
      } finally {
        await endpoints?.close();
        await obs.flush();
      }
    } finally {
      await connection.close();
    }
  } finally {
    stopWatching();
    closeWorkspaceWatchers();
    await runtime.close();
  }
}

main().then(
  // Nothing else should keep the process alive once the worker has stopped.
  () => process.exit(0),
  (err) => {
    process.stderr.write(`keel worker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
