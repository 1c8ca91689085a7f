/**
 * Keel worker process: `TEMPORAL_ADDRESS=host:7233 DATABASE_URL=postgres://… npm run worker`
 * (or `keel worker`). Runs until SIGINT/SIGTERM, then drains in-flight tasks and exits.
 */
import { loadKeelSettings } from '../src/config/agent-config';
import { runWorker } from './run-worker';

const log = (line: string) => void process.stderr.write(`keel worker: ${line}\n`);

// keel.config.json (KEEL_CONFIG) under the environment: the defaults and one section per agent. Read
// inside the promise, so a bad file ends as one line like every other start failure, not a stack.
Promise.resolve()
  .then(() => runWorker(loadKeelSettings()))
  .then(
    // Nothing else should keep the process alive once the worker has stopped.
    () => process.exit(0),
    (err) => {
      log(err instanceof Error ? err.message : String(err));
      process.exit(1);
    },
  );
