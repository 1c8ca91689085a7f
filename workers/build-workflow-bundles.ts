/**
 * `npm run build`'s second step: `node dist/workers/build-workflow-bundles.js` writes the workflow
 * bundles (plain, and with encrypted failures) beside the compiled code, so a worker starts without
 * running webpack (workers/workflow-bundles.ts).
 */
import { join } from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import { buildWorkflowBundles } from './workflow-bundles';

buildWorkflowBundles(join(__dirname, '..'), ['plain', 'encoded-failures'], new DefaultLogger('WARN')).then(
  (files) => process.stderr.write(`keel build: ${files.length} workflow bundles written (${files.join(', ')})\n`),
  (err: unknown) => {
    process.stderr.write(`keel build: workflow bundles failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
