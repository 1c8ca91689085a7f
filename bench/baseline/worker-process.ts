/**
 * The baseline worker as its own process, so the fleet bench measures it the way it measures a Keel
 * worker process: `TEMPORAL_ADDRESS=… BASELINE_TASK_QUEUE=… node -r ts-node/register bench/baseline/worker-process.ts`.
 * Prints "baseline worker: polling" once it polls; stops on SIGTERM. BASELINE_FLOOR_DATABASE_URL and
 * BASELINE_FLOOR_MODEL_URL give it the I/O floor's store and fake model.
 */
import { NativeConnection, Runtime, DefaultLogger } from '@temporalio/worker';
import { openStore, type Store } from '../../src/store/connect';
import { startBaselineWorker } from './worker';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS;
  const taskQueue = process.env.BASELINE_TASK_QUEUE;
  if (!address || !taskQueue) throw new Error('set TEMPORAL_ADDRESS and BASELINE_TASK_QUEUE');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address });
  // The fleet bench gives it the Keel worker's cache size, so their RSS compares like for like.
  const maxCachedWorkflows = process.env.BASELINE_MAX_CACHED_WORKFLOWS
    ? Number(process.env.BASELINE_MAX_CACHED_WORKFLOWS)
    : undefined;
  // With a database and a model server it also runs the I/O floor's activity (a turn's statements and model call).
  const floorDb = process.env.BASELINE_FLOOR_DATABASE_URL;
  const modelUrl = process.env.BASELINE_FLOOR_MODEL_URL;
  const store: Store | undefined =
    floorDb && modelUrl ? await openStore({ kind: 'postgres', url: floorDb }) : undefined;
  const worker = await startBaselineWorker(connection, taskQueue, {
    ...(maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows }),
    ...(store && modelUrl ? { floor: { db: store.db, modelUrl } } : {}),
  });
  process.stdout.write('baseline worker: polling\n');
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await worker.stop();
  await store?.close();
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`baseline worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
