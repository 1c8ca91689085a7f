/**
 * Keel's workflow bundle, built once per source state by jest's globalSetup and read by every suite,
 * instead of each suite running webpack inside its jest environment (about 1–2 s of CPU each, and
 * webpack's lazy requires failed there when an environment was torn down mid-build).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle } from '@temporalio/worker';

/** Set by globalSetup for every test worker: the file holding the bundle's code. */
export const WORKFLOW_BUNDLE_ENV = 'KEEL_TEST_WORKFLOW_BUNDLE';

/** Builds the bundle into `dir` (the compiled entries' folder, named by the source hash) unless it is there; returns the file. */
export async function buildWorkflowBundle(dir: string): Promise<string> {
  const file = join(dir, 'workflow-bundle.js');
  if (existsSync(file)) return file;
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') });
  const building = `${file}.${process.pid}.tmp`;
  writeFileSync(building, code);
  renameSync(building, file);
  return file;
}

/** The prebuilt bundle when globalSetup made one (jest), else a fresh build (a bench or a script). */
export async function keelWorkflowBundle(): Promise<WorkflowBundle> {
  const file = process.env[WORKFLOW_BUNDLE_ENV];
  if (file) return { code: readFileSync(file, 'utf8') };
  return bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') });
}
