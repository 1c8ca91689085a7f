import type { PGlite } from '@electric-sql/pglite';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/**
 * A `pg`-Pool-shaped adapter around one PGlite instance, for kysely's PostgresDialect.
 *
 * PGlite is a single session: two interleaved transactions would share it. So the adapter hands out
 * one connection at a time and queues the rest until `release()`.
 */
export class PGlitePool implements PostgresPool {
  private busy = false;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly pglite: PGlite) {}

  async connect(): Promise<PostgresPoolClient> {
    if (this.busy) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.busy = true;
    let released = false;
    const client = {
      query: async <R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> => {
        const result = await this.pglite.query<R>(sql, parameters as unknown[]);
        return {
          command: commandOf(sql),
          rowCount: result.affectedRows ?? result.rows.length,
          rows: result.rows,
        };
      },
      release: () => {
        if (released) return;
        released = true;
        const next = this.waiters.shift();
        if (next) next();
        else this.busy = false;
      },
    };
    return client as PostgresPoolClient;
  }

  /** The PGlite instance is owned by whoever created it; ending the pool does not close it. */
  async end(): Promise<void> {}
}

function commandOf(sql: string): PostgresQueryResult<unknown>['command'] {
  const verb = sql.trimStart().slice(0, 6).toUpperCase();
  if (verb.startsWith('INSERT')) return 'INSERT';
  if (verb.startsWith('UPDATE')) return 'UPDATE';
  if (verb.startsWith('DELETE')) return 'DELETE';
  if (verb.startsWith('MERGE')) return 'MERGE';
  return 'SELECT';
}
