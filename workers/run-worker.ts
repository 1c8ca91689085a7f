import { NativeConnection } from '@temporalio/worker';
import type { KeelSettings } from '../src/config/agent-config';
import type { ToolRegistry } from '../src/tools/registry';
import { DEFAULTS } from '../src/config/defaults';
import { validateStartup } from '../src/config/validate-startup';
import { watchDatabaseHealth } from '../src/store/health-watch';
import { openRuntime } from '../src/runtime/activity-deps';
import { temporalConnectionFor } from '../src/temporal/connection-for-config';
import { describeTemporalConnection } from '../src/temporal/connection-options';
import { openStoreBesideTemporal } from '../src/store/reachable-store';
import { atRestFor, storeTargetFor } from '../src/store/connect';
import { createKeelWorker } from './create-worker';
import { prepareCluster } from '../src/temporal/prepare-cluster';
import { exitIfShutdownHangs } from './exit-if-shutdown-hangs';
import { closeWorkspaceWatchers } from '../activities/parts/workspace-cache';
import { installObservability, serveObservability } from './observability';
import { codecServerFor } from '../src/security/codec-server';

/**
 * Runs a Keel worker until SIGINT/SIGTERM, then drains in-flight tasks. It works for the cluster
 * TEMPORAL_ADDRESS / DATABASE_URL name, or else for the embedded stack running under KEEL_HOME
 * (`keel dev` elsewhere): its Temporal server and, through its socket, its PGlite database.
 */
export async function runWorker(
  settings: KeelSettings,
  opts: { pretty?: boolean; tools?: ToolRegistry } = {},
): Promise<void> {
  // pino as Temporal's Runtime logger (JSON; KEEL_LOG_PRETTY=1 for people), metrics and tracing from the environment.
  const obs = installObservability(process.env, opts.pretty ? { pretty: true } : {});
  const log = (line: string) => obs.logger.info(`keel worker: ${line}`);
  const config = settings.defaults;
  // TEMPORAL_ADDRESS with its namespace, TLS and API key (or the running `keel dev` stack's server).
  const temporal = temporalConnectionFor(config);
  // No model is allowed: compaction, import and replay work without one (extractive summaries).
  await validateStartup(settings.defaults, { requireModel: false, agents: settings.agents });
  // Both dependencies answer within seconds, or the start stops with one line naming the one that did not.
  const store = await openStoreBesideTemporal(storeTargetFor(config), { atRest: atRestFor(config) }, temporal);
  const runtime = await openRuntime({
    config,
    agents: settings.agents,
    store,
    ...(opts.tools ? { tools: opts.tools } : {}),
  }).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  // Turns wait (and retry) while the database is away; the log says when that is.
  const stopWatching = watchDatabaseHealth({
    probe: () => runtime.store.healthy(),
    intervalMs: DEFAULTS.databaseProbeIntervalMs,
    log,
  });
  try {
    const connection = await NativeConnection.connect(temporal);
    try {
      await prepareCluster(config, temporal);
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
      // The Web UI's decoder for encrypted payloads, only when asked for (KEEL_CODEC_SERVER_PORT).
      const codecServer = await codecServerFor(config);
      if (codecServer) log(`codec server on port ${codecServer.port} (POST /encode, /decode; bearer token required)`);
      exitIfShutdownHangs(config.shutdownGraceMs + DEFAULTS.workerShutdownForceExtraMs + 15_000);
      log(
        `polling ${config.taskQueue} on ${config.temporalAddress ? describeTemporalConnection(config, temporal.address) : temporal.address} (pid ${process.pid})`,
      );
      try {
        await worker.run();
      } finally {
        await codecServer?.close();
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
    await store.close();
  }
}
