/**
 * Keel's workflow bundle, built once per source state by jest's globalSetup and read by every suite,
 * instead of each suite running webpack inside its jest environment (about 1–2 s of CPU each, and
 * webpack's lazy requires failed there when an environment was torn down mid-build).
 */
import { readFileSync } from 'node:fs';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle } from '@temporalio/worker';
import { buildWorkflowBundles, prebuiltWorkflowBundle } from '../../workers/workflow-bundles';

/** Set by globalSetup for every test worker: the file holding the bundle's code. */
export const WORKFLOW_BUNDLE_ENV = 'KEEL_TEST_WORKFLOW_BUNDLE';

/**
 * Builds the bundle from the compiled sources in `dir` (the compiled entries' folder, named by the
 * source hash) unless it is there, as `npm run build` does for dist/: worker processes the tests
 * start find it and skip webpack, like a production worker. Returns the file.
 */
export async function buildWorkflowBundle(dir: string): Promise<string> {
  const prebuilt = prebuiltWorkflowBundle('plain', dir);
  if ('file' in prebuilt) return prebuilt.file;
  const [file] = await buildWorkflowBundles(dir, ['plain'], new DefaultLogger('WARN'));
  return file!;
}

/** The prebuilt bundle when globalSetup made one (jest), else a fresh build (a bench or a script). */
export async function keelWorkflowBundle(): Promise<WorkflowBundle> {
  const file = process.env[WORKFLOW_BUNDLE_ENV];
  if (file) return { code: readFileSync(file, 'utf8') };
  return bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') });
}
