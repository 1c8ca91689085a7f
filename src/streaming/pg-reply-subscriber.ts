import { Client } from 'pg';
import type { ReplyStreamSubscriber } from './reply-subscriber';

/** How to reach the PostgreSQL server the workers write replies to. */
export interface PgReplyStreamSubscriberOptions {
  readonly connectionString: string;
  /** Where a lost connection is reported (default: stderr). */
  readonly log?: (line: string) => void;
  /** Wait before connecting again after the connection dropped. Default 1 s. */
  readonly reconnectDelayMs?: number;
}

/**
 * Streams from PostgreSQL over one dedicated connection (LISTEN needs a session of its own; a pool
 * connection would carry it back to the pool). A dropped connection is opened again and every
 * channel listened to anew; what was sent meanwhile is lost, which streaming may afford (the turn's
 * reply still arrives whole).
 */
export class PgReplyStreamSubscriber implements ReplyStreamSubscriber {
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private connecting: Promise<Client> | undefined;
  /** The connection in use once connected (events of an older one are ignored). */
  private current: Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly log: (line: string) => void;
  private deafness: Promise<string | undefined> | undefined;

  constructor(private readonly opts: PgReplyStreamSubscriberOptions) {
    this.log = opts.log ?? ((line) => void process.stderr.write(`${line}\n`));
  }

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('keel: this reply stream subscriber is closed');
    const handlers = this.handlers.get(channel) ?? new Set();
    this.handlers.set(channel, handlers);
    handlers.add(onPayload);
    try {
      const client = await this.connection();
      await client.query(`LISTEN ${quoteIdent(channel)}`);
    } catch (err) {
      this.remove(channel, onPayload);
      throw err;
    }
    return async () => {
      if (!this.remove(channel, onPayload)) return;
      const client = await this.connecting?.catch(() => undefined);
      await client?.query(`UNLISTEN ${quoteIdent(channel)}`).catch(() => undefined);
    };
  }

  /**
   * A PGlite served over a socket (`keel dev`'s database) answers LISTEN but never delivers a
   * NOTIFY: PGlite sends notifications only to listeners inside its own process.
   */
  cannotHear(): Promise<string | undefined> {
    this.deafness ??= this.connection()
      .then((client) => client.query<{ version: string }>('SELECT version() AS version'))
      .then(({ rows }) =>
        /PGlite/.test(rows[0]?.version ?? '')
          ? 'keel: replies will not stream: the database this client listens on is PGlite served by `keel dev`, and PGlite delivers NOTIFY only inside its own process; each reply arrives whole (onText is not called). Streaming needs the workers on a PostgreSQL server (DATABASE_URL)'
          : undefined,
      )
      // An unreachable database is reported when listening fails.
      .catch(() => undefined);
    return this.deafness;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const client = await this.connecting?.catch(() => undefined);
    this.connecting = undefined;
    this.current = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Removes a handler; true when it was the channel's last. */
  private remove(channel: string, onPayload: (payload: string) => void): boolean {
    const handlers = this.handlers.get(channel);
    if (!handlers?.delete(onPayload) || handlers.size > 0) return false;
    this.handlers.delete(channel);
    return true;
  }

  private connection(): Promise<Client> {
    if (!this.connecting) {
      const attempt = this.connect();
      this.connecting = attempt;
      attempt.catch(() => {
        if (this.connecting === attempt) this.connecting = undefined;
      });
    }
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    // Bounded, so an unreachable database delays a send by seconds, not forever (streaming is best effort).
    const client = new Client({
      connectionString: this.opts.connectionString,
      connectionTimeoutMillis: 5_000,
      query_timeout: 5_000,
    });
    client.on('notification', (msg) => {
      for (const handler of this.handlers.get(msg.channel) ?? []) handler(msg.payload ?? '');
    });
    client.on('error', (err) => this.lost(client, err.message));
    client.on('end', () => this.lost(client, 'connection ended'));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.current = client;
    return client;
  }

  private lost(client: Client, reason: string): void {
    if (this.closed || client !== this.current) return;
    this.current = undefined;
    this.connecting = undefined;
    void client.end().catch(() => undefined);
    this.log(`keel reply stream: database connection lost (${reason}); reconnecting`);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      if (this.closed || this.handlers.size === 0) return;
      this.connection().catch((err: unknown) =>
        this.log(
          `keel reply stream: reconnect failed (${err instanceof Error ? err.message : String(err)}); the next request tries again`,
        ),
      );
    }, this.opts.reconnectDelayMs ?? 1_000);
    this.reconnectTimer.unref();
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
