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
import { startDevServer } from '../../src/temporal/dev-server';
import { claimSharedNamespace } from './shared-temporal';
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

/**
 * A suite's Temporal: a namespace of its own on the jest worker's shared dev server
 * (test/support/shared-temporal.ts), or a dev server of its own when it needs dynamic config, or
 * outside jest. With a client connection and the prebuilt workflow bundle.
 */
export interface TemporalTestEnv {
  readonly address: string;
  readonly namespace: string;
  /** The dev server's process (shared by other suites unless this suite has its own). */
  readonly serverPid: number;
  /** TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE, for a worker or `keel` process the test starts. */
  readonly processEnv: { readonly TEMPORAL_ADDRESS: string; readonly TEMPORAL_NAMESPACE: string };
  readonly connection: Connection;
  readonly nativeConnection: NativeConnection;
  readonly bundle: WorkflowBundle;
  close(): Promise<void>;
}

/** Where a suite's workflows run, and how to release it when the suite is over. */
interface SuiteServer {
  readonly address: string;
  readonly namespace: string;
  readonly pid: number;
  release(): Promise<void>;
}

/**
 * `failureConverterPath` goes into the workflow bundle, as a worker bundling `workflows/` with that
 * data converter does (the encryption suite: failures raised in workflow code are encoded too).
 * `dynamicConfig` needs a server of the suite's own (it applies to the whole server).
 */
export async function startTemporalTestEnv(
  opts: { failureConverterPath?: string; dynamicConfig?: Record<string, string | number | boolean> } = {},
): Promise<TemporalTestEnv> {
  quietRuntime();
  const { dynamicConfig, failureConverterPath } = opts;
  const [server, bundle] = await Promise.all([
    suiteServer(dynamicConfig),
    // A failure converter changes the bundle: that suite builds its own.
    failureConverterPath
      ? bundleWorkflowCode({
          workflowsPath: require.resolve('../../workflows'),
          logger: new DefaultLogger('WARN'),
          failureConverterPath,
        })
      : keelWorkflowBundle(),
  ]);
  const { address, namespace } = server;
  const retry = drainableRetry();
  const connection = await Connection.connect({ address, interceptors: [retry.interceptor] });
  const nativeConnection = await NativeConnection.connect({ address });
  return {
    address,
    namespace,
    serverPid: server.pid,
    processEnv: { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace },
    connection,
    nativeConnection,
    bundle,
    async close() {
      await retry.stopRetrying();
      await connection.close();
      await nativeConnection.close();
      await server.release();
    },
  };
}

async function suiteServer(dynamicConfig: Record<string, string | number | boolean> | undefined): Promise<SuiteServer> {
  const shared = dynamicConfig ? undefined : await claimSharedNamespace();
  if (shared) return { ...shared, release: async () => {} };
  const own = await startDevServer({ log: () => {}, ...(dynamicConfig ? { dynamicConfig } : {}) });
  return { address: own.address, namespace: own.namespace, pid: own.pid, release: () => own.stop() };
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
    namespace: env.namespace,
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
    namespace: env.namespace,
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
  const childEnv = {
    ...process.env,
    TS_NODE_SWC: 'true',
    TS_NODE_TRANSPILE_ONLY: 'true',
    KEEL_SHUTDOWN_GRACE_MS: '2000',
    ...(home ? { KEEL_HOME: home } : {}),
    ...env,
  };
  const child = spawn(process.execPath, entryArgs('workers/main.ts', childEnv), {
    cwd: root,
    env: childEnv,
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
