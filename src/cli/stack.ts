import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime as TemporalRuntime, type Worker } from '@temporalio/worker';
import type { KeelConfig } from '../config/keel-config';
import { startDevServer, type DevServer } from '../temporal/dev-server';
import { openRuntime, type Runtime } from '../runtime/activity-deps';
// The one import of workers/ under src/ (eslint.config.mjs says why).
import { createKeelWorker } from '../../workers/create-worker';
import { prepareCluster } from '../temporal/prepare-cluster';
import { KeelClient } from '../client/keel-client';

/** Temporal + database + worker + client in one process: what `npm run dev` runs. */
export interface LocalStack {
  readonly client: KeelClient;
  readonly runtime: Runtime;
  readonly temporalAddress: string;
  readonly uiUrl?: string;
  stop(): Promise<void>;
}

/**
 * Starts the embedded stack: a local Temporal dev server unless TEMPORAL_ADDRESS is set (its history
 * persists in `<home>/temporal.db`), the store (PGlite in `<home>/db` unless DATABASE_URL is set),
 * and a worker on the task queue.
 */
export async function startLocalStack(config: KeelConfig, log: (line: string) => void): Promise<LocalStack> {
  // The worker's routine state changes would interleave with the chat; warnings and errors still show.
  TemporalRuntime.install({ logger: new DefaultLogger('WARN') });
  let server: DevServer | undefined;
  let address = config.temporalAddress;
  if (!address) {
    mkdirSync(resolve(config.home), { recursive: true });
    server = await startDevServer({ dbFilename: resolve(config.home, 'temporal.db'), ui: true, log });
    address = server.address;
  }
  await prepareCluster({ ...config, temporalAddress: address }, log);
  const runtime = await openRuntime({ config, toolsModule: process.env.KEEL_TOOLS_MODULE });
  log(`store: ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${resolve(config.home, 'db')}`}, migrated`);
  const nativeConnection = await NativeConnection.connect({ address });
  const worker: Worker = await createKeelWorker({
    connection: nativeConnection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    deps: runtime.deps,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new KeelClient({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    contextWindowTokens: config.contextWindowTokens,
  });
  log(`worker: polling task queue "${config.taskQueue}"`);
  return {
    client,
    runtime,
    temporalAddress: address,
    uiUrl: server?.uiUrl,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await nativeConnection.close();
      await runtime.close();
      await server?.stop();
    },
  };
}
