import { loadKeelSettings } from '../config/agent-config';
import type { RunWorker } from './local-stack';

/**
 * `keel worker`: a worker for the cluster TEMPORAL_ADDRESS / DATABASE_URL name, or for the embedded
 * stack `keel dev` runs under the same KEEL_HOME. Returns the exit code once the worker has drained.
 */
export async function workerCommand(runWorker: RunWorker): Promise<number> {
  // A person's command: readable lines on stderr (the worker process `npm run worker` logs JSON to stdout).
  await runWorker(loadKeelSettings(), { pretty: true });
  return 0;
}
