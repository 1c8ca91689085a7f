import { createServer, type Server } from 'node:net';
import type { EmbeddedPglite } from './embedded-pglite';
import type { PGLiteSocketHandler, PGLiteSocketHandlerOptions } from '@electric-sql/pglite-socket';
import { loadPgliteSocket } from './load-pglite';
import type { SessionLock } from './session-lock';

/** A PGlite instance reachable over the PostgreSQL wire protocol by other processes. */
export interface ServedPglite {
  /** `postgres://…@127.0.0.1:PORT/postgres`: what other processes connect to. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `pglite` on a local TCP port. pglite-socket's own server queues clients per protocol
 * message, so a second client's Parse can land between another's Parse and Bind, and the
 * in-process pool's transactions would interleave with socket clients'. Here every client holds
 * the instance's SessionLock — the one the in-process pool takes — from its first message until
 * the session is idle again (ReadyForQuery outside a transaction block).
 */
export async function servePglite(
  pglite: EmbeddedPglite,
  lock: SessionLock,
  opts: { port?: number } = {},
): Promise<ServedPglite> {
  const { PGLiteSocketHandler } = await loadPgliteSocket();
  const queue = new SessionQueue(pglite, lock);
  const handlers = new Set<PGLiteSocketHandler>();
  const server: Server = createServer((socket) => {
    const handler = new PGLiteSocketHandler({
      queryQueue: queue as unknown as PGLiteSocketHandlerOptions['queryQueue'],
      closeOnDetach: true,
    });
    handlers.add(handler);
    const forget = () => handlers.delete(handler);
    handler.addEventListener('close', forget);
    handler.addEventListener('error', forget);
    handler.attach(socket).catch(() => {
      forget();
      socket.destroy();
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([...handlers].map((h) => h.detach(true)));
      handlers.clear();
      await closed;
    },
  };
}

/** Frontend messages that continue an extended-protocol exchange: the session stays with their sender until Sync. */
const MID_EXCHANGE = new Set(['P', 'B', 'D', 'E', 'C', 'H', 'd', 'c', 'f'].map((c) => c.charCodeAt(0)));
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

/**
 * Stands in for pglite-socket's query queue (same three methods the handler calls): runs each
 * client's messages while that client holds the session, and hands the session on when the
 * client's unit of work is over.
 */
class SessionQueue {
  private holder: number | undefined;
  private release: (() => void) | undefined;
  private readonly gone = new Set<number>();

  constructor(
    private readonly pglite: EmbeddedPglite,
    private readonly lock: SessionLock,
  ) {}

  async enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    if (this.holder !== handlerId) {
      const release = await this.lock.acquire();
      if (this.gone.has(handlerId)) {
        release();
        throw new Error('client disconnected');
      }
      this.holder = handlerId;
      this.release = release;
    }
    let bytes = 0;
    try {
      await this.pglite.runExclusive(() =>
        this.pglite.execProtocolRawStream(message, {
          onRawData: (data) => {
            bytes += data.length;
            onData(data);
          },
        }),
      );
    } finally {
      if (!MID_EXCHANGE.has(message[0]!) && !this.pglite.isInTransaction()) this.handOn(handlerId);
    }
    return bytes;
  }

  /** A client that left gives up its place in line. */
  clearQueueForHandler(handlerId: number): void {
    this.gone.add(handlerId);
  }

  /** A client that left while holding the session: end its exchange and roll back its transaction. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.holder !== handlerId) return;
    try {
      await this.pglite.runExclusive(() => this.pglite.execProtocolRaw(SYNC));
      if (this.pglite.isInTransaction()) await this.pglite.exec('ROLLBACK');
    } finally {
      this.handOn(handlerId);
    }
  }

  getQueueLength(): number {
    return 0;
  }

  private handOn(handlerId: number): void {
    if (this.holder !== handlerId) return;
    this.holder = undefined;
    const release = this.release;
    this.release = undefined;
    release?.();
  }
}
