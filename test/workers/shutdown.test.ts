import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer } from '../../src/temporal/dev-server';
import { spawnWorkerProcess } from '../support/temporal';

/**
 * A worker whose Temporal server died still stops when asked: SIGTERM starts a graceful drain, and
 * the drain is bounded (before, a compiled worker kept retrying its polls until killed).
 */
describe('worker shutdown', () => {
  it('exits after SIGTERM when its Temporal server is gone', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-shutdown-'));
    const server = await startDevServer({ log: () => {} });
    const worker = spawnWorkerProcess({ TEMPORAL_ADDRESS: server.address, KEEL_HOME: home, KEEL_TASK_QUEUE: 'keel-shutdown-test', KEEL_SHUTDOWN_GRACE_MS: '1000' });
    try {
      await worker.ready;
      await server.stop();
      const exited = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
      worker.child.kill('SIGTERM');
      const code = await exited;
      // Exited on its own (a clean drain, or the bounded give-up), not killed by the test.
      expect(worker.child.signalCode).toBeNull();
      expect(typeof code).toBe('number');
      expect(worker.output()).toContain('SIGTERM: draining');
    } finally {
      await worker.kill();
      await server.stop().catch(() => undefined);
      await rm(home, { recursive: true, force: true });
    }
  }, 120_000);
});
