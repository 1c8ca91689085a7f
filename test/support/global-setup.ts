/**
 * Jest globalSetup: says which suites skip PostgreSQL, compiles the process entry points once so
 * every `keel` and worker process a test starts runs JavaScript (test/support/compiled-entries.ts),
 * builds the workflow bundle every suite's in-process workers share (test/support/workflow-bundle.ts),
 * drops the test schemas earlier runs left on the PostgreSQL server (test/support/stale-schemas.ts),
 * initialises the empty PGlite folder in-memory stores start from, and the same with Keel's
 * migrations run (test/support/pglite-template.ts),
 * and makes the run's folder where each jest worker records its shared Temporal dev server
 * (test/support/shared-temporal.ts; global-teardown.ts stops them). Test workers inherit the
 * environment set here.
 */
import { COMPILED_DIR_ENV, compileEntries } from './compiled-entries';
import reportSkips from './report-skips';
import { buildWorkflowBundle, WORKFLOW_BUNDLE_ENV } from './workflow-bundle';
import { dropStaleTestSchemas } from './stale-schemas';
import {
  buildMigratedPgliteTemplate,
  buildPgliteTemplate,
  PGLITE_MIGRATED_TEMPLATE_ENV,
  PGLITE_TEMPLATE_ENV,
} from './pglite-template';
import { prepareTestRunDir, TEST_RUN_DIR_ENV } from './shared-temporal';

export default async function globalSetup(): Promise<void> {
  reportSkips();
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const dropped = await dropStaleTestSchemas(url);
    if (dropped > 0)
      process.stderr.write(
        `\ndropped ${dropped} test schemas earlier runs left on ${new URL(url).pathname.slice(1)}\n`,
      );
  }
  const compiled = compileEntries();
  process.env[COMPILED_DIR_ENV] = compiled;
  process.env[WORKFLOW_BUNDLE_ENV] = await buildWorkflowBundle(compiled);
  process.env[PGLITE_TEMPLATE_ENV] = await buildPgliteTemplate();
  process.env[PGLITE_MIGRATED_TEMPLATE_ENV] = await buildMigratedPgliteTemplate(process.env[PGLITE_TEMPLATE_ENV]);
  process.env[TEST_RUN_DIR_ENV] = prepareTestRunDir();
}
