import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Connection } from '@temporalio/client';
import { resolveTemporalCli } from './resolve-cli';
import { KEEL_SEARCH_ATTRIBUTES } from './search-attributes';

/** A local `temporal server start-dev` owned by this process. */
export interface DevServer {
  readonly address: string;
  readonly namespace: string;
  readonly uiUrl?: string | undefined;
  readonly pid: number;
  stop(): Promise<void>;
}

export interface StartDevServerOptions {
  /** SQLite file for persistence across restarts; in-memory when unset. */
  dbFilename?: string;
  /** Serve the Web UI too (npm run dev); tests run headless. */
  ui?: boolean;
  log?: (line: string) => void;
  /** Dynamic config values over Keel's (e.g. `limit.historyCount.suggestContinueAsNew`, so a test sees continue-as-new early). */
  dynamicConfig?: Readonly<Record<string, string | number | boolean>>;
  /** Namespaces registered at start beside `default`, each with Keel's search attributes (tests give each suite its own). */
  namespaces?: readonly string[];
}

/** Asks the OS for a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts a Temporal dev server from the resolved CLI on free ports, with eager activity execution
 * (the model call starts in the workflow task that schedules it, saving a round trip per turn) and
 * Keel's search attributes.
 */
export async function startDevServer(opts: StartDevServerOptions = {}): Promise<DevServer> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const cli = await resolveTemporalCli({ log });
  if (cli.source === 'not-found') {
    throw new Error(
      'No Temporal CLI: set TEMPORAL_CLI_PATH, put `temporal` on PATH, install Go so Keel can build it, ' +
        'or set TEMPORAL_ADDRESS to an existing cluster',
    );
  }
  // A free port can be taken between the probe and the server's bind (other processes start servers
  // too): the server then exits with "address already in use", and a retry on new ports starts it.
  for (let attempt = 1; ; attempt++) {
    const { args, address, uiUrl } = await devServerArgs(opts);
    // Its own process group: a Ctrl-C at the terminal reaches the chat, which stops the server in order.
    const child = spawn(cli.path, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    const stderr = new StderrKeeper();
    child.stderr!.on('data', (d: Buffer) => stderr.add(d.toString()));
    try {
      await waitUntilServing(address, child);
    } catch (err) {
      child.kill('SIGKILL');
      if (attempt < PORT_RACE_ATTEMPTS && stderr.portInUse) continue;
      throw new Error(`Temporal dev server (${cli.path}) did not start: ${(err as Error).message}\n${stderr.text()}`, {
        cause: err,
      });
    }
    log(`temporal: dev server (${cli.source}: ${cli.path}) serving on ${address}${uiUrl ? `, UI ${uiUrl}` : ''}`);
    return {
      address,
      namespace: 'default',
      uiUrl,
      pid: child.pid!,
      stop: () => stopChild(child),
    };
  }
}

const PORT_RACE_ATTEMPTS = 3;

/**
 * The server's stderr for an error message: its head and its tail. A bind failure is a Go panic
 * whose reason is on the first line and whose goroutine dump runs to many KB, so keeping only the
 * tail lost the "address already in use" the port-race retry looks for.
 */
export class StderrKeeper {
  private static readonly KEEP = 4_000;
  private head = '';
  private tail = '';
  private dropped = false;
  private last = '';
  portInUse = false;

  add(chunk: string): void {
    // Across chunk boundaries too: the stream's last bytes are prepended.
    const seen = this.last + chunk;
    if (/address already in use/.test(seen)) this.portInUse = true;
    this.last = seen.slice(-64);
    if (this.head.length < StderrKeeper.KEEP) {
      const room = StderrKeeper.KEEP - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (chunk.length === 0) return;
    const joined = this.tail + chunk;
    if (joined.length > StderrKeeper.KEEP) this.dropped = true;
    this.tail = joined.slice(-StderrKeeper.KEEP);
  }

  text(): string {
    return this.dropped ? `${this.head}\n…\n${this.tail}` : this.head + this.tail;
  }
}

/** The transfer queue reader's poll rate on the dev server (Temporal's default: 20 per shard; deploy/temporal-dynamic-config.yaml sets the same). */
const TRANSFER_QUEUE_MAX_POLL_RPS = 200;

/** The CLI's arguments on newly probed free ports. */
async function devServerArgs(
  opts: StartDevServerOptions,
): Promise<{ args: string[]; address: string; uiUrl?: string }> {
  const port = await freePort();
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--log-level',
    'error',
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
    // A turn's workflow task after its model call is dispatched through the history shard's transfer
    // queue, whose reader polls at most 20 times a second by default; the dev server has one shard,
    // so under steady traffic every turn waited for the next slot (Updates settled on a 50 ms cadence).
    '--dynamic-config-value',
    `history.transferProcessorMaxPollRPS=${TRANSFER_QUEUE_MAX_POLL_RPS}`,
    ...KEEL_SEARCH_ATTRIBUTES.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
    ...(opts.namespaces ?? []).flatMap((namespace) => ['--namespace', namespace]),
    ...Object.entries(opts.dynamicConfig ?? {}).flatMap(([key, value]) => [
      '--dynamic-config-value',
      `${key}=${value}`,
    ]),
  ];
  let uiUrl: string | undefined;
  if (opts.ui) {
    const uiPort = await freePort();
    args.push('--ui-port', String(uiPort));
    uiUrl = `http://127.0.0.1:${uiPort}`;
  } else {
    args.push('--headless');
  }
  args.push('--http-port', String(await freePort()), '--metrics-port', String(await freePort()));
  if (opts.dbFilename) args.push('--db-filename', opts.dbFilename);
  return { args, address: `127.0.0.1:${port}`, ...(uiUrl ? { uiUrl } : {}) };
}

async function waitUntilServing(address: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await conn.workflowService.describeNamespace({ namespace: 'default' });
        return;
      } finally {
        await conn.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`not serving after ${timeoutMs} ms: ${String(lastError)}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
