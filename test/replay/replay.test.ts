import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { keelSinks } from '../../workers/keel-sinks';
import { keelWorkflowBundle } from '../support/workflow-bundle';
import { FINISH_IN_MODEL_CALL } from '../../workflows/session-steps';

/**
 * Replays recorded session histories against today's workflow code: a change that would make
 * running sessions non-deterministic (reordered activities, new commands) fails here, before it ships.
 */
describe('saved session histories replay against the current workflow code', () => {
  it('replays every recorded history without a non-determinism error', async () => {
    // Errors only: a workflow's call to a sink the replayer lacks would show here.
    const errors: string[] = [];
    const logger = new DefaultLogger('ERROR', ({ level, message }) => errors.push(`${level} ${message}`));
    Runtime.install({ logger });
    const dir = join(__dirname, 'histories');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.binpb'));
    expect(files.length).toBeGreaterThan(0);
    const workflowBundle = await keelWorkflowBundle();
    for (const file of files) {
      const history = temporal.api.history.v1.History.decode(await readFile(join(dir, file)));
      // The worker's sinks, as a real worker has them (they are not called on replay).
      await expect(Worker.runReplayHistory({ workflowBundle, sinks: keelSinks(logger, undefined) }, history, file)).resolves.toBeUndefined();
    }
    expect(errors).toEqual([]);
  });

  it('hold both shapes of a turn: with a finishTurn step (recorded before the patch) and finished in the last model call', async () => {
    const dir = join(__dirname, 'histories');
    const shape = async (file: string) => {
      const history = temporal.api.history.v1.History.decode(await readFile(join(dir, file)));
      const markers = (history.events ?? []).map((e) => e.markerRecordedEventAttributes).filter((m) => m != null);
      const payload = (m: (typeof markers)[number]) => Buffer.from(m!.details?.data?.payloads?.[0]?.data ?? m!.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString('utf8');
      return {
        patched: markers.some((m) => m!.markerName === 'core_patch' && payload(m).includes(FINISH_IN_MODEL_CALL)),
        finishTurnSteps: markers.filter((m) => m!.markerName === 'core_local_activity' && payload(m).includes('"finishTurn"')).length,
      };
    };
    expect(await shape('session-turns-admitted-by-update.binpb')).toEqual({ patched: false, finishTurnSteps: 2 });
    expect(await shape('session-turns-finished-in-model-call.binpb')).toEqual({ patched: true, finishTurnSteps: 0 });
  });
});
