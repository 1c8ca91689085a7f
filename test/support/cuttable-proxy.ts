/**
 * A TCP proxy in front of a server (PostgreSQL) that a test can cut: while cut, every open connection
 * is reset and new ones are closed at once, as when the database host goes away; `restore` lets
 * connections through again.
 */
import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CuttableProxy {
  /** 127.0.0.1 and the proxy's ephemeral port. */
  readonly host: string;
  readonly port: number;
  /** Resets every open connection and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  /** Connections refused while cut: someone tried the database during the outage. */
  readonly refused: number;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (host and port) on 127.0.0.1. */
export async function startCuttableProxy(target: { host: string; port: number }): Promise<CuttableProxy> {
  const open = new Set<Socket>();
  let down = false;
  let refused = 0;
  const server = createServer((client) => {
    if (down) {
      refused++;
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    const pair = [client, upstream];
    for (const s of pair) {
      open.add(s);
      s.on('error', () => pair.forEach((p) => p.destroy()));
      s.on('close', () => {
        open.delete(s);
        pair.forEach((p) => p.destroy());
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    cut() {
      down = true;
      for (const s of open) s.resetAndDestroy();
    },
    restore() {
      down = false;
    },
    get refused() {
      return refused;
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
