/**
 * The application's worker: its own workflows on its own task queue (`research`). It connects as
 * Keel does (same namespace, TLS and API key) and shares Keel's payload codec, so the agent tasks'
 * inputs and results stay sealed when KEEL_ENCRYPTION_KEYS is set.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { keelDataConverter, keyRingFor, loadKeelSettings, temporalConnectionFor } from 'keel-agents';

export const RESEARCH_TASK_QUEUE = 'research';

async function main(): Promise<void> {
  const config = loadKeelSettings().defaults;
  const connection = await NativeConnection.connect(temporalConnectionFor(config));
  const dataConverter = keelDataConverter(keyRingFor(config));
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: RESEARCH_TASK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
    ...(dataConverter ? { dataConverter } : {}),
  });
  process.stderr.write(`research worker: polling ${RESEARCH_TASK_QUEUE}\n`);
  await worker.run();
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`research worker: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
