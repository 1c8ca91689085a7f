/**
 * Workflow bundles built ahead of time, beside the compiled code (`npm run build` → dist/).
 *
 * A worker given `workflowsPath` runs webpack when it starts: seconds of CPU, and much of webpack's
 * memory stays in the process's RSS afterwards. Built once
 * at build time, a worker reads a file instead. The manifest names a hash of the compiled sources a
 * bundle came from, so a bundle older than the code beside it is never used: the worker bundles
 * in-process as before.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode, type Logger, type WorkflowBundle } from '@temporalio/worker';
import { filesUnder, hashFiles } from './file-tree-hash';

/** Plain, or with the failure converter that encrypts failures (a worker with encryption keys). */
export type WorkflowBundleVariant = 'plain' | 'encoded-failures';

const MANIFEST = 'workflow-bundles.json';
/** What a workflow bundle can contain from this repository (the rest is node_modules). */
const SOURCE_DIRS = ['workflows', 'src'];

interface Manifest {
  readonly sourceHash: string;
  /** Variant → file name beside the manifest. */
  readonly files: Partial<Record<WorkflowBundleVariant, string>>;
}

/** The compiled code's root: dist/ under `node`, the repository under ts-node (where no manifest is). */
const BUILD_ROOT = join(__dirname, '..');

/**
 * Builds the bundles of `variants` from the compiled workflows under `root` and writes them with
 * their manifest; returns the files written.
 */
export async function buildWorkflowBundles(
  root: string,
  variants: readonly WorkflowBundleVariant[],
  logger?: Logger,
): Promise<string[]> {
  const files: Partial<Record<WorkflowBundleVariant, string>> = {};
  const written: string[] = [];
  for (const variant of variants) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: join(root, 'workflows'),
      // The converter of the same tree as the workflows (payload-codec's ENCODED_FAILURE_CONVERTER_PATH, compiled).
      ...(variant === 'encoded-failures'
        ? { failureConverterPath: require.resolve(join(root, 'src', 'security', 'encoded-failure-converter')) }
        : {}),
      ...(logger ? { logger } : {}),
    });
    const name = `workflow-bundle.${variant}.js`;
    writeAtomically(join(root, name), code);
    files[variant] = name;
    written.push(join(root, name));
  }
  const manifest: Manifest = { sourceHash: sourceHash(root), files };
  writeAtomically(join(root, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return written;
}

/** The prebuilt bundle of `variant` beside the running code, or why there is none (the worker then bundles itself). */
export function prebuiltWorkflowBundle(
  variant: WorkflowBundleVariant,
  root = BUILD_ROOT,
): { bundle: WorkflowBundle; file: string } | { why: string } {
  const manifestFile = join(root, MANIFEST);
  if (!existsSync(manifestFile)) return { why: 'no prebuilt workflow bundle (npm run build makes one)' };
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
  } catch (err) {
    return { why: `${manifestFile} is unreadable (${err instanceof Error ? err.message : String(err)})` };
  }
  const name = manifest.files?.[variant];
  if (!name) return { why: `no prebuilt ${variant} workflow bundle in ${manifestFile}` };
  if (manifest.sourceHash !== sourceHash(root))
    return { why: `the prebuilt workflow bundles in ${root} are older than the code beside them (run npm run build)` };
  const file = join(root, name);
  if (!existsSync(file)) return { why: `${file} is missing (run npm run build)` };
  return { bundle: { code: readFileSync(file, 'utf8') }, file };
}

/** A hash of every compiled file a bundle can include, with the workflow SDK's version. */
function sourceHash(root: string): string {
  const files = SOURCE_DIRS.flatMap((d) => filesUnder(join(root, d), (name) => name.endsWith('.js')));
  return hashFiles(root, files, `@temporalio/workflow@${workflowSdkVersion()}`);
}

function workflowSdkVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('@temporalio/workflow/package.json'), 'utf8')) as { version: string })
    .version;
}

/** Another process may be reading the old file: write beside it and rename. */
function writeAtomically(file: string, text: string): void {
  const building = `${file}.${process.pid}.tmp`;
  writeFileSync(building, text);
  renameSync(building, file);
}
