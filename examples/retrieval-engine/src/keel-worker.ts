/**
 * A Keel worker with the retrieval engine in the context-engine slot. Register the engine before the
 * worker reads its config, then select it: KEEL_CONTEXT_ENGINE=retrieval (or `"contextEngine":
 * "retrieval"` in keel.config.json, with `contextEngineOptions.maxRecalled`).
 */
import { registerContextEngine } from 'keel-agents';
import { runKeelWorker } from 'keel-agents/worker';
import { RetrievalContextEngine } from './retrieval-engine';

registerContextEngine('retrieval', (options) => new RetrievalContextEngine(options));

runKeelWorker().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`keel worker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
