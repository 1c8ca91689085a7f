import type { EmbeddedPglite } from './embedded-pglite';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type { SessionLock } from './session-lock';

/**
 * A `pg`-Pool-shaped adapter around one PGlite instance, for kysely's PostgresDialect.
 *
 * PGlite is a single session: two interleaved transactions would share it. So a checked-out
 * connection holds the instance's SessionLock until `release()`; socket clients of the same
 * instance (see pglite-server.ts) wait on the same lock.
 */
export class PGlitePool implements PostgresPool {
  constructor(
    private readonly pglite: EmbeddedPglite,
    private readonly lock: SessionLock,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    const release = await this.lock.acquire();
    const client = {
      query: async <R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> => {
        const result = await this.pglite.query<R>(sql, parameters as unknown[]);
        return {
          command: commandOf(sql),
          rowCount: result.affectedRows ?? result.rows.length,
          rows: result.rows,
        };
      },
      release,
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
