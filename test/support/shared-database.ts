import { PGlite } from '@electric-sql/pglite';
import { servePglite } from '../../src/embedded/pglite-server';
import { SessionLock } from '../../src/embedded/session-lock';
import { freePort } from '../../src/temporal/dev-server';
import { freshSchemaUrl } from './databases';
import { pgliteTemplate } from './pglite-template';

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
  if (url)
    kinds.push({
      name: 'postgres',
      open: async () => ({ name: 'postgres', url: await freshSchemaUrl(url), close: async () => {} }),
    });
  return kinds;
}

async function servePGlite(): Promise<SharedDatabase> {
  const template = pgliteTemplate();
  const db = await PGlite.create('memory://', template ? { loadDataDir: template } : {});
  const port = await freePort();
  // Keel's own server, as `keel dev` serves its folder to other processes: each client holds the one
  // PGlite session from its Parse to its Sync. pglite-socket's server queues per message, so two
  // workers' statements interleaved (a Bind meeting another client's Parse: a uuid sent as a timestamp).
  const served = await servePglite(db, new SessionLock(), { port });
  return {
    name: 'pglite',
    url: served.url,
    async close() {
      await served.close();
      await db.close();
    },
  };
}
