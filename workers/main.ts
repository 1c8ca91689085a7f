/**
 * Keel worker process: `TEMPORAL_ADDRESS=host:7233 DATABASE_URL=postgres://… npm run worker`.
 * Runs until SIGINT/SIGTERM, then drains in-flight tasks and exits.
 */
import { NativeConnection } from '@temporalio/worker';
import { configFromEnv } from '../src/config/keel-config';
import { openRuntime } from '../src/runtime/activity-deps';
import { createKeelWorker } from './create-worker';
import { prepareCluster } from '../src/temporal/prepare-cluster';

async function main(): Promise<void> {
  const config = configFromEnv();
  if (!config.temporalAddress) {
    throw new Error('TEMPORAL_ADDRESS is not set: point it at a Temporal frontend (host:7233), or run `npm run dev` for an embedded stack');
  }
  const runtime = await openRuntime({ config, toolsModule: process.env.KEEL_TOOLS_MODULE });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  await prepareCluster(config);
  const worker = await createKeelWorker({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    deps: runtime.deps,
  });
  process.stderr.write(`keel worker: polling ${config.taskQueue} on ${config.temporalAddress} (pid ${process.pid})\n`);
  try {
    await worker.run();
  } finally {
    await connection.close();
    await runtime.close();
  }
}

main().catch((err) => {
  process.stderr.write(`keel worker: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
