import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prebuiltWorkflowBundle } from '../../workers/workflow-bundles';
import { COMPILED_DIR_ENV } from '../support/compiled-entries';

/**
 * The prebuilt bundle is used only while it matches the compiled code beside it. globalSetup built
 * the plain bundle into the compiled entries' folder (as `npm run build` does for dist/); a copy of
 * that folder is aged here.
 */
describe('prebuiltWorkflowBundle', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'keel-bundles-'));
    cpSync(process.env[COMPILED_DIR_ENV]!, root, { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('serves the bundle built from the code beside it', () => {
    const found = prebuiltWorkflowBundle('plain', root);
    expect(found).toMatchObject({ file: join(root, 'workflow-bundle.plain.js') });
    expect('bundle' in found && found.bundle.code).toContain('sessionWorkflow');
  });

  it('refuses it once a workflow or src file changed, and names the fix', () => {
    appendFileSync(join(root, 'src', 'protocol.js'), '\n// edited after the build\n');
    expect(prebuiltWorkflowBundle('plain', root)).toEqual({
      why: `the prebuilt workflow bundles in ${root} are older than the code beside them (run npm run build)`,
    });
  });

  it('says so when the variant was not built or there is no build at all', () => {
    expect(prebuiltWorkflowBundle('encoded-failures', root)).toEqual({
      why: `no prebuilt encoded-failures workflow bundle in ${join(root, 'workflow-bundles.json')}`,
    });
    rmSync(join(root, 'workflow-bundles.json'));
    expect(prebuiltWorkflowBundle('plain', root)).toEqual({
      why: 'no prebuilt workflow bundle (npm run build makes one)',
    });
  });
});
