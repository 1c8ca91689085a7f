import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { ConfigError } from '../config/keel-config';
import type { ApiDeps } from './api-deps';
import { createApiApp } from './api-app';

/** A running HTTP API. */
export interface ServedApi {
  /** `http://host:port`, with the port the system chose when asked for 0. */
  readonly url: string;
  /** Stops listening and ends open streams (a turn one of them follows goes on in its session). */
  close(): Promise<void>;
}

/** Whether `host` is a loopback address: only this machine can connect. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Refuses to serve beyond loopback without a token: anyone who can connect could run the agents.
 * Throws a ConfigError naming both settings and the fix.
 */
export function checkApiBinding(host: string, token: string | undefined): void {
  if (!token && !isLoopback(host)) {
    throw new ConfigError(
      `KEEL_API_HOST ${host} is reachable beyond this machine and KEEL_API_TOKEN is not set: set a token (\`export KEEL_API_TOKEN=$(openssl rand -hex 24)\`) or bind 127.0.0.1`,
    );
  }
}

/** Serves the HTTP API on `host:port` (checked by `checkApiBinding`); a port in use is a ConfigError naming KEEL_API_PORT. */
export async function serveApi(
  deps: ApiDeps,
  opts: { readonly host: string; readonly port: number },
): Promise<ServedApi> {
  checkApiBinding(opts.host, deps.token);
  const app = createApiApp(deps);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: opts.host, port: opts.port }) as Server;
    s.once('listening', () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new ConfigError(
              `KEEL_API_PORT ${opts.port} is in use on ${opts.host}: stop what holds it or set another port`,
            )
          : err,
      ),
    );
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Event streams never end by themselves.
        server.closeAllConnections();
      }),
  };
}
