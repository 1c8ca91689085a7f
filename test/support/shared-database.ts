import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { freePort } from '../../src/temporal/dev-server';
import { freshSchemaUrl } from './databases';

/**
 * A database that several processes can reach by URL: a test and the worker processes it spawns.
 * `pglite` serves a fresh in-memory PGlite over the PostgreSQL wire protocol (pglite-socket), so the
 * crash tests run on PGlite too; `postgres` is a fresh schema on TEST_DATABASE_URL.
 */
export interface SharedDatabase {
  readonly name: 'pglite' | 'postgres';
  readonly url: string;
  close(): Promise<void>;
}

export interface SharedDatabaseKind {
  readonly name: 'pglite' | 'postgres';
  open(): Promise<SharedDatabase>;
}

export function sharedDatabases(): SharedDatabaseKind[] {
  const kinds: SharedDatabaseKind[] = [{ name: 'pglite', open: servePGlite }];
  const url = process.env.TEST_DATABASE_URL;
  if (url) kinds.push({ name: 'postgres', open: async () => ({ name: 'postgres', url: await freshSchemaUrl(url), close: async () => {} }) });
  return kinds;
}

async function servePGlite(): Promise<SharedDatabase> {
  const db = await PGlite.create('memory://');
  const port = await freePort();
  // Queries queue per statement across connections; our tests do not run concurrent multi-statement transactions.
  const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: 32 });
  await server.start();
  return {
    name: 'pglite',
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
