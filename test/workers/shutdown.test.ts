import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { startDevServer } from '../../src/temporal/dev-server';
import { KeelClient } from '../../src/client/keel-client';
import { startFakeAnthropic, fakeReply } from '../../src/testing';
import { uniqueTaskQueue } from '../support/temporal';
import { compiledEntryArgs } from '../support/compiled-entries';

const root = resolve(__dirname, '../..');

/**
 * The image's command, as a real process: `node <build>/workers/main.js` with nothing else loaded,
 * which starts from the prebuilt bundle beside it instead of running webpack (the run's compiled
 * sources; test/package runs `npm run build` itself and the packed worker). It answers a turn; and when its Temporal server has died,
 * SIGTERM still ends it (a graceful drain, bounded), where it used to retry its polls until killed.
 */
describe('the compiled worker process', () => {
  it('answers a turn, then exits after SIGTERM once its Temporal server is gone', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-compiled-'));
    // The run's compiled sources, with the bundle globalSetup built beside them as `npm run build` does.
    const [main] = compiledEntryArgs('workers/main.ts');
    const outDir = dirname(dirname(main!));
    const [server, fake] = await Promise.all([startDevServer({ log: () => {} }), startFakeAnthropic()]);
    const taskQueue = uniqueTaskQueue();
    const metricsPort = await freePort();
    const child = spawn(process.execPath, [main!], {
      cwd: root,
      env: {
        ...process.env,
        ...fake.env,
        TEMPORAL_ADDRESS: server.address,
        KEEL_HOME: home,
        KEEL_TASK_QUEUE: taskQueue,
        KEEL_SHUTDOWN_GRACE_MS: '1000',
        KEEL_METRICS_PORT: String(metricsPort),
        KEEL_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    // 'close' comes after the last of its output was read ('exit' may come before).
    const closed = new Promise<void>((r) => child.once('close', () => r()));
    const polling = new Promise<void>((resolveReady, reject) => {
      const onData = (d: Buffer) => {
        output += d.toString();
        if (output.includes('keel worker: polling')) resolveReady();
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => reject(new Error(`worker exited early (${code}):\n${output}`)));
    });
    const connection = await Connection.connect({ address: server.address });
    try {
      await polling;
      expect(output).toContain(`keel worker: workflow bundle ${join(outDir, 'workflow-bundle.plain.js')}`);
      fake.respondWith(() => fakeReply.text('hello from the compiled worker'));
      const result = await new KeelClient({ connection, taskQueue }).sendMessage('agent:compiled:main', 'hi');
      expect(result.reply).toBe('hello from the compiled worker');
      // Its observability: the turn in /metrics, ready while it polls.
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toContain('keel_turn_duration_seconds_count{agent="compiled"} 1');
      expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).toBe(200);

      await connection.close();
      await server.stop();
      child.kill('SIGTERM');
      const code = await exited;
      // It ended on its own (a clean drain, or the bounded give-up), not by the test's SIGKILL below.
      expect(child.signalCode).toBeNull();
      expect(typeof code).toBe('number');
      expect(output).toContain('SIGTERM: draining');
      // Every line it wrote is in once its pipes closed: the turn's JSON line is one of them.
      await closed;
      const turnLine = output.split('\n').find((l) => l.includes('"msg":"turn"'));
      expect(JSON.parse(turnLine!)).toMatchObject({
        event: 'turn',
        agentId: 'compiled',
        sessionKey: 'agent:compiled:main',
        modelCalls: 1,
      });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await connection.close().catch(() => undefined);
      await server.stop().catch(() => undefined);
      await fake.close();
      await rm(home, { recursive: true, force: true });
    }
  }, 300_000);
});

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}
