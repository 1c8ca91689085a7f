import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import pinoPretty from 'pino-pretty';
import { Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { KeelSettings } from '../src/config/agent-config';
import { startDevServer, type DevServer } from '../src/temporal/dev-server';
import { openRuntime } from '../src/runtime/activity-deps';
import { createKeelWorker } from './create-worker';
import { closeWorkspaceWatchers } from '../activities/parts/workspace-cache';
import { prepareCluster } from '../src/temporal/prepare-cluster';
import { keelClientForConfig } from '../src/client/keel-client-for-config';
import { replyStreamForStore } from '../src/streaming/reply-stream-for-store';
import type { LocalStack } from '../src/cli/local-stack';
import { atRestFor, storeTargetFor } from '../src/store/connect';
import { openStoreBesideTemporal } from '../src/store/reachable-store';
import { temporalConnectionOptions } from '../src/temporal/connection-options';
import { servePglite } from '../src/embedded/pglite-server';
import { unusableFolderError } from '../src/embedded/unusable-folder';
import { removeStackState, runningStack, writeStackState } from '../src/embedded/stack-state';
import { releasePgliteFolder } from '../src/embedded/folder-owner';
import { DEFAULTS } from '../src/config/defaults';
import { installObservability, serveObservability } from './observability';
import { codecServerFor } from '../src/security/codec-server';

/**
 * Starts the embedded stack: a local Temporal dev server unless TEMPORAL_ADDRESS is set (its history
 * persists in `<home>/temporal.db`), the store (PGlite in `<home>/db` unless DATABASE_URL is set),
 * and a worker on the task queue. This process owns the PGlite folder: it serves it on a local port
 * and writes `<home>/stack.json` (Temporal address, database URL, pid), through which every other
 * `keel` command reaches this stack instead of opening the folder itself. When a step fails, what
 * already started is stopped before the error is rethrown: a failed start leaves no dev server behind.
 */
export async function startLocalStack(settings: KeelSettings, log: (line: string) => void): Promise<LocalStack> {
  const config = settings.defaults;
  const home = resolve(config.home);
  try {
    mkdirSync(home, { recursive: true });
    mkdirSync(resolve(home, 'logs'), { recursive: true });
  } catch (err) {
    throw (
      unusableFolderError(err, {
        path: home,
        holds: "keel dev's files (KEEL_HOME)",
        fix: 'set KEEL_HOME to a folder this process can write',
      }) ?? err
    );
  }
  // Pretty lines in a file, never over the chat's prompt; warnings and up unless KEEL_LOG_LEVEL says otherwise.
  const logFile = resolve(home, 'logs', 'dev.log');
  const obs = installObservability(process.env, {
    pretty: true,
    level: 'warn',
    destination: pinoPretty({
      destination: logFile,
      sync: true,
      colorize: false,
      ignore: 'pid',
      translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
    }),
    // The chat decides what Ctrl-C means (cancel the turn, or leave); the SDK must not drain the worker on it.
    shutdownSignals: [],
  });
  // What has started so far, stopped in reverse order by stop() or when a later step fails.
  const started: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of started.splice(0).reverse()) {
      await stop().catch((err: unknown) => log(`stopping: ${err instanceof Error ? err.message : String(err)}`));
    }
  };
  // Last to stop: spans of the worker's final tasks are flushed.
  started.push(() => obs.flush());
  try {
    const other = runningStack(config.home);
    if (other) {
      throw new Error(
        `an embedded stack already runs in process ${other.pid} (since ${other.startedAt}) with KEEL_HOME ${resolve(config.home)}: ` +
          'chat with it through `keel chat <sessionKey>`, or stop it first',
      );
    }
    // The database (and a configured Temporal) first: a wrong DATABASE_URL or TEMPORAL_ADDRESS is
    // reported before a dev server is started for nothing.
    const target = storeTargetFor(config);
    // A configured cluster is reached with its namespace, TLS and API key; the stack's own dev server is plain.
    const cluster = config.temporalAddress ? temporalConnectionOptions(config, config.temporalAddress) : undefined;
    const store = await openStoreBesideTemporal(target, { atRest: atRestFor(config) }, cluster);
    started.push(() => store.close());
    let server: DevServer | undefined;
    let temporal = cluster;
    if (!temporal) {
      server = await startDevServer({ dbFilename: resolve(config.home, 'temporal.db'), ui: true, log });
      started.push(() => server!.stop());
      temporal = { address: server.address };
    }
    const address = temporal.address;
    await prepareCluster({ ...config, temporalAddress: address }, temporal, log);
    const runtime = await openRuntime({ config, agents: settings.agents, store });
    started.push(() => runtime.close());
    // Other processes reach the PGlite folder through this process: it serves the database on a local port.
    const served =
      runtime.store.pglite && runtime.store.pgliteLock
        ? await servePglite(runtime.store.pglite, runtime.store.pgliteLock)
        : undefined;
    if (served) started.push(() => served.close());
    log(
      `store: ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${resolve(config.home, 'db')}, served at ${served!.url.replace(/\/\/[^@]*@/, '//')}`}, migrated`,
    );
    const nativeConnection = await NativeConnection.connect(temporal);
    started.push(() => nativeConnection.close());
    const worker: Worker = await createKeelWorker({
      connection: nativeConnection,
      namespace: config.temporalNamespace,
      taskQueue: config.taskQueue,
      deps: { ...runtime.deps, ...(obs.metrics ? { metrics: obs.metrics } : {}) },
      plugins: obs.plugins,
      shutdownGraceMs: DEFAULTS.devShutdownGraceMs,
    });
    const running = worker.run();
    started.push(async () => {
      worker.shutdown();
      await running;
      // The worker's workspace watchers go with it (they are unref'd, but a stopped stack holds nothing).
      closeWorkspaceWatchers();
    });
    const connection = await Connection.connect(temporal);
    started.push(() => connection.close());
    const endpoints = await serveObservability(obs, worker, {
      database: () => runtime.store.healthy(),
      temporal: () => nativeConnection.workflowService.getSystemInfo({}).then(() => true),
    });
    if (endpoints) started.push(() => endpoints.close());
    // The Web UI of the dev server decodes encrypted payloads through it (KEEL_CODEC_SERVER_PORT).
    const codecServer = await codecServerFor(config);
    if (codecServer) {
      started.push(() => codecServer.close());
      log(
        `codec server on port ${codecServer.port}: set the Web UI's codec endpoint to http://127.0.0.1:${codecServer.port}/<KEEL_CODEC_SERVER_TOKEN>`,
      );
    }
    // Replies stream through the store the worker writes (PGlite: this process; PostgreSQL: LISTEN).
    const stream = replyStreamForStore(runtime.store, log);
    started.push(() => stream.close());
    const client = keelClientForConfig(config, connection, { stream, warn: log });
    log(`worker: polling task queue "${config.taskQueue}"`);
    writeStackState(config.home, {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      temporalAddress: address,
      ...(server ? { temporalPid: server.pid } : {}),
      ...(served && target.kind === 'pglite' ? { databaseUrl: served.url, dataDir: resolve(target.dataDir) } : {}),
    });
    started.push(async () => removeStackState(config.home));
    const kill = () => {
      if (server) killQuietly(server.pid);
      if (target.kind === 'pglite') releasePgliteFolder(resolve(target.dataDir));
      removeStackState(config.home);
    };
    return {
      client,
      runtime,
      temporalAddress: address,
      uiUrl: server?.uiUrl,
      logFile,
      logger: obs.logger,
      stop: stopAll,
      kill,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
