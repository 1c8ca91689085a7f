/**
 * Jest globalSetup: says which suites skip PostgreSQL, compiles the process entry points once so
 * every `keel` and worker process a test starts runs JavaScript (test/support/compiled-entries.ts),
 * and builds the workflow bundle every suite's in-process workers share (test/support/workflow-bundle.ts).
 * Test workers inherit the environment set here.
 */
import { COMPILED_DIR_ENV, compileEntries } from './compiled-entries';
import reportSkips from './report-skips';
import { buildWorkflowBundle, WORKFLOW_BUNDLE_ENV } from './workflow-bundle';

export default async function globalSetup(): Promise<void> {
  reportSkips();
  const compiled = compileEntries();
  process.env[COMPILED_DIR_ENV] = compiled;
  process.env[WORKFLOW_BUNDLE_ENV] = await buildWorkflowBundle(compiled);
}
