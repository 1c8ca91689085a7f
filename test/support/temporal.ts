import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { entryArgs } from './compiled-entries';
import { drainableRetry } from './drainable-retry';
import { keelWorkflowBundle } from './workflow-bundle';
import { Connection } from '@temporalio/client';
import { IllegalStateError, type DataConverter } from '@temporalio/common';
import {
  bundleWorkflowCode,
  NativeConnection,
  Runtime,
  DefaultLogger,
  type Worker,
  type WorkflowBundle,
} from '@temporalio/worker';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server';
import { KeelClient } from '../../src/client/keel-client';
import { createKeelWorker, type KeelWorkerOptions } from '../../workers/create-worker';
import type { ActivityDeps } from '../../src/runtime/deps';
import type { SessionTuning } from '../../src/protocol';

let runtimeInstalled = false;
/** Workers log at WARN in tests: failures show, routine polling does not. */
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  // A suite that checks Keel's own logging installs the worker's runtime first; it stays.
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
  }
}

/** One real Temporal dev server per suite, with a client connection and a prebuilt workflow bundle. */
export interface TemporalTestEnv {
  readonly server: DevServer;
  readonly connection: Connection;
  readonly nativeConnection: NativeConnection;
  readonly bundle: WorkflowBundle;
  close(): Promise<void>;
}

/**
 * `failureConverterPath` goes into the workflow bundle, as a worker bundling `workflows/` with that
 * data converter does (the encryption suite: failures raised in workflow code are encoded too).
 */
export async function startTemporalTestEnv(
  opts: { failureConverterPath?: string; dynamicConfig?: Record<string, string | number | boolean> } = {},
): Promise<TemporalTestEnv> {
  quietRuntime();
  const { dynamicConfig, failureConverterPath } = opts;
  const [server, bundle] = await Promise.all([
    startDevServer({ log: () => {}, ...(dynamicConfig ? { dynamicConfig } : {}) }),
    // A failure converter changes the bundle: that suite builds its own.
    failureConverterPath
      ? bundleWorkflowCode({
          workflowsPath: require.resolve('../../workflows'),
          logger: new DefaultLogger('WARN'),
          failureConverterPath,
        })
      : keelWorkflowBundle(),
  ]);
  const retry = drainableRetry();
  const connection = await Connection.connect({ address: server.address, interceptors: [retry.interceptor] });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  return {
    server,
    connection,
    nativeConnection,
    bundle,
    async close() {
      await retry.stopRetrying();
      await connection.close();
      await nativeConnection.close();
      await server.stop();
    },
  };
}

/** A unique task queue per test, so workers of different tests never steal each other's tasks. */
export function uniqueTaskQueue(prefix = 'keel-test'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Starts an in-process worker; returns it with a stop function that waits for shutdown. */
export async function runInProcessWorker(
  env: TemporalTestEnv,
  taskQueue: string,
  deps: ActivityDeps,
  extra: Pick<KeelWorkerOptions, 'plugins'> = {},
): Promise<{ worker: Worker; stop(): Promise<void> }> {
  const worker = await createKeelWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    deps,
    workflowBundle: env.bundle,
    shutdownGraceMs: 2_000,
    ...extra,
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

export function keelClient(
  env: TemporalTestEnv,
  taskQueue: string,
  tuning?: SessionTuning,
  contextWindowTokens?: number,
  dataConverter?: DataConverter,
): KeelClient {
  return new KeelClient({
    connection: env.connection,
    taskQueue,
    tuning,
    contextWindowTokens,
    ...(dataConverter ? { dataConverter } : {}),
  });
}

/** A worker in a separate OS process (`workers/main.ts`), for crash tests: SIGKILL is real. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Resolves once the worker logged that it is polling. */
  ready: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
  output(): string;
}

export function spawnWorkerProcess(env: Record<string, string>): WorkerProcess {
  const root = resolve(__dirname, '../..');
  // Its own KEEL_HOME unless the test shares one: the default (./.keel) would be the checkout's.
  const home = env.KEEL_HOME ? undefined : mkdtempSync(join(tmpdir(), 'keel-worker-home-'));
  const child = spawn(process.execPath, entryArgs('workers/main.ts'), {
    cwd: root,
    env: {
      ...process.env,
      TS_NODE_SWC: 'true',
      TS_NODE_TRANSPILE_ONLY: 'true',
      KEEL_SHUTDOWN_GRACE_MS: '2000',
      ...(home ? { KEEL_HOME: home } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (home) child.once('exit', () => rmSync(home, { recursive: true, force: true }));
  let out = '';
  const ready = new Promise<void>((resolveReady, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('keel worker: polling')) resolveReady();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) =>
      reject(new Error(`worker exited early (code ${code}, signal ${signal}):\n${out}`)),
    );
  });
  ready.catch(() => {});
  return {
    child,
    ready,
    output: () => out,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill(signal);
      await exited;
    },
  };
}
