/**
 * The Keel worker, in this application's process: Keel's workflows and activities on the
 * application's own Keel task queue (keel-task-queue.ts), with the application's one tool. Database,
 * Temporal (address, namespace, TLS, API key) and model come from the environment and keel.config.json.
 */
import { failureChain } from './keel-task-queue';
import { z } from 'zod';
import { ToolRegistry } from 'keel-agents';
import { runKeelWorker } from 'keel-agents/worker';

const tools = new ToolRegistry().register({
  name: 'lookup',
  description: 'Looks a term up in the team glossary',
  input: z.object({ term: z.string() }),
  run: async ({ term }) => `${term}: the structural spine along the bottom of a hull`,
});

runKeelWorker({ tools }).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`keel worker: ${failureChain(err)}\n`);
    process.exit(1);
  },
);
