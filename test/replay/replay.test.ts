import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';

/**
 * Replays recorded session histories against today's workflow code: a change that would make
 * running sessions non-deterministic (reordered activities, new commands) fails here, before it ships.
 */
describe('saved session histories replay against the current workflow code', () => {
  it('replays every recorded history without a non-determinism error', async () => {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    const dir = join(__dirname, 'histories');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.binpb'));
    expect(files.length).toBeGreaterThan(0);
    const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') });
    for (const file of files) {
      const history = temporal.api.history.v1.History.decode(await readFile(join(dir, file)));
      await expect(Worker.runReplayHistory({ workflowBundle }, history, file)).resolves.toBeUndefined();
    }
  });
});
