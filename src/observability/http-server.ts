/**
 * The worker's observability endpoint: `/metrics` (Keel's series, plus Temporal's when merged in),
 * `/healthz` (the worker runs) and `/readyz` (it runs and reaches its database and Temporal).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthChecks {
  /** The worker polls (Temporal `Worker.getState() === 'RUNNING'`). */
  readonly running: () => boolean;
  /** Cheap probes that must all pass for the worker to be ready, by name (database, temporal). */
  readonly ready: Readonly<Record<string, () => Promise<boolean>>>;
}

export interface ObservabilityServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves /metrics, /healthz and /readyz on `port` (0: any free port) of `host`. */
export async function startObservabilityServer(opts: {
  port: number;
  host?: string;
  registry: Registry;
  health: HealthChecks;
}): Promise<ObservabilityServer> {
  const server: Server = createServer((req, res) => {
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') return reply(405, 'use GET\n');
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => reply(200, text, opts.registry.contentType),
        (err: unknown) => reply(500, `${String(err)}\n`),
      );
      return;
    }
    if (path === '/healthz') return opts.health.running() ? reply(200, 'ok\n') : reply(503, 'worker not running\n');
    if (path === '/readyz') {
      readiness(opts.health).then(
        ({ ok, checks }) => reply(ok ? 200 : 503, `${JSON.stringify({ ok, checks })}\n`, 'application/json'),
        (err: unknown) => reply(500, `${String(err)}\n`),
      );
      return;
    }
    reply(404, 'not found: use /metrics, /healthz or /readyz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`KEEL_METRICS_PORT ${opts.port} is in use; choose another port or 0 to turn the endpoint off`)
          : err,
      ),
    );
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Each probe within a few seconds: a hung database counts as down, not as a hung endpoint. */
async function readiness(health: HealthChecks): Promise<{ ok: boolean; checks: Record<string, boolean> }> {
  const checks: Record<string, boolean> = { worker: health.running() };
  await Promise.all(
    Object.entries(health.ready).map(async ([name, probe]) => {
      checks[name] = await withTimeout(probe(), 3_000).catch(() => false);
    }),
  );
  return { ok: Object.values(checks).every(Boolean), checks };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
