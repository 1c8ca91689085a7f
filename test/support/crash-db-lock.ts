/**
 * Holds a PostgreSQL table lock from the test's own connection, so a fast database step of a worker
 * (an append, a session upsert, the compaction record write) waits on it long enough to be SIGKILLed.
 */
import { Client } from 'pg';

/** A backend waiting for a lock on the table: its pid and the statement it runs. */
export interface BlockedBackend {
  readonly pid: number;
  readonly query: string;
}

export interface TableLock {
  /** Resolves once `count` other backends wait for this table whose statement matches `pattern`. */
  waitForBlocked(pattern: RegExp, count?: number, timeoutMs?: number): Promise<BlockedBackend[]>;
  /** Commits (releasing the lock) and closes the connection; safe to call twice. */
  release(): Promise<void>;
}

/** Poll interval of `waitForBlocked`. */
const POLL_MS = 100;
/** Default wait for a blocked backend: a spawned worker must first pick the task up. */
const DEFAULT_BLOCK_TIMEOUT_MS = 60_000;

/**
 * Opens a transaction on `url` and takes `LOCK TABLE <table> IN <mode> MODE`. When `wait` is false the
 * lock request may queue behind others: the returned promise resolves once it is granted, and the
 * lock is usable through `queued` right away (its `waitForBlocked` works before the grant).
 */
export async function lockTable(
  url: string,
  table: string,
  mode: 'EXCLUSIVE' | 'ACCESS EXCLUSIVE' = 'EXCLUSIVE',
): Promise<{ lock: TableLock; granted: Promise<void> }> {
  const holder = new Client({ connectionString: url });
  const watcher = new Client({ connectionString: url });
  await Promise.all([holder.connect(), watcher.connect()]);
  const holderPid = Number((await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
  await holder.query('BEGIN');
  const granted = holder.query(`LOCK TABLE ${table} IN ${mode} MODE`).then(() => undefined);
  granted.catch(() => {});
  let released = false;
  const lock: TableLock = {
    async waitForBlocked(pattern, count = 1, timeoutMs = DEFAULT_BLOCK_TIMEOUT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { rows } = await watcher.query<{ pid: number; query: string }>(
          `SELECT DISTINCT a.pid, a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.relation = $1::regclass AND NOT l.granted AND a.pid <> $2`,
          [table, holderPid],
        );
        const blocked = rows.filter((r) => pattern.test(r.query)).map((r) => ({ pid: Number(r.pid), query: r.query }));
        if (blocked.length >= count) return blocked;
        if (Date.now() > deadline)
          throw new Error(
            `no ${count} backend(s) blocked on ${table} matching ${pattern} after ${timeoutMs} ms; blocked: ${JSON.stringify(rows)}`,
          );
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
    async release() {
      if (released) return;
      released = true;
      await granted.catch(() => {});
      await holder.query('COMMIT').catch(() => {});
      await Promise.all([holder.end(), watcher.end()]);
    },
  };
  return { lock, granted };
}

/** Like `lockTable`, but resolves only once the lock is granted. */
export async function holdTableLock(
  url: string,
  table: string,
  mode: 'EXCLUSIVE' | 'ACCESS EXCLUSIVE' = 'EXCLUSIVE',
): Promise<TableLock> {
  const { lock, granted } = await lockTable(url, table, mode);
  await granted;
  return lock;
}
