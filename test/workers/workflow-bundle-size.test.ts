import { keelWorkflowBundle } from '../support/workflow-bundle';

/**
 * With reuseV8Context the SDK evaluates the workflow modules again for every workflow it creates (a
 * new session, or a turn of one evicted from the cache): a library pulled into the bundle costs that
 * much on every creation. zod was 18 modules and a third of the bundle, and the fleet profile showed
 * its initialisation in every createWorkflow; workflow code must not reach it again.
 */
describe('the workflow bundle', () => {
  it('holds only the Temporal SDK from node_modules (no zod or other input-edge libraries)', async () => {
    const { code } = await keelWorkflowBundle();
    if (!code) throw new Error('expected a code bundle');
    // Keel's own modules, when bundled from the tests' compiled folder, sit under node_modules/.cache.
    const packages = new Set(
      [...code.matchAll(/^\/\*\*\*\/ "\.\/node_modules\/(?!\.cache\/)((?:@[^/"]+\/)?[^/"]+)/gm)].map((m) => m[1]),
    );
    expect(code).toMatch(/^\/\*\*\*\/ "\.[^"]*\/workflows\/session\.[jt]s"/m);
    expect([...packages].sort()).toEqual(['@temporalio/common', '@temporalio/workflow', 'long', 'ms', 'nexus-rpc']);
  });
});
