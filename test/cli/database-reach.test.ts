import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { withStore } from '../../src/cli/commands/shared';
import { openStore } from '../../src/store/connect';
import { freshSchemaUrl } from '../support/databases';
import { describeOnPostgres } from '../support/postgres-only';

// Kysely's migrator serialises migrations with this database-wide advisory lock (postgres-adapter.js).
const KYSELY_MIGRATION_LOCK = '3853314791062309107';

async function withDatabaseUrl<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.DATABASE_URL;
  process.env.DATABASE_URL = url;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  }
}

describe('a CLI command opening PostgreSQL', () => {
  let silent: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // Accepts the connection and never answers: a hung server or a wrong port behind a proxy.
    silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('gives up on a server that never answers, naming DATABASE_URL and the address without the password', async () => {
    const { port } = silent.address() as AddressInfo;
    const url = `postgres://keel:secret@127.0.0.1:${port}/keel`;
    await expect(withDatabaseUrl(url, () => withStore(async () => 'opened'))).rejects.toThrow(
      `cannot reach the database at postgres://keel:***@127.0.0.1:${port}/keel (DATABASE_URL): no answer within 5 s; start PostgreSQL or fix DATABASE_URL`,
    );
  });
});

describeOnPostgres(
  'a CLI command waiting for another process’s migration',
  'needs a server where another connection holds the migration lock',
  () => {
    it('waits for the migration lock instead of calling the database unreachable, and skips it once the schema is at the latest', async () => {
      const url = await freshSchemaUrl(process.env.TEST_DATABASE_URL!);
      const holder = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await holder.connect();
      try {
        await holder.query(`SELECT pg_advisory_lock(${KYSELY_MIGRATION_LOCK})`);
        let opened = false;
        const command = withDatabaseUrl(url, () =>
          withStore(async (store) => {
            opened = true;
            return (await store.db.selectFrom('sessions').select('session_key').execute()).length;
          }),
        );
        // Longer than the 5 s connection limit: the old whole-open timeout failed here.
        await new Promise((resolve) => setTimeout(resolve, 6_500));
        expect(opened).toBe(false);
        await holder.query(`SELECT pg_advisory_unlock(${KYSELY_MIGRATION_LOCK})`);
        await expect(command).resolves.toBe(0);
        expect(opened).toBe(true);
        // Now at the latest migration: the next command does not queue behind the lock at all.
        await holder.query(`SELECT pg_advisory_lock(${KYSELY_MIGRATION_LOCK})`);
        await expect(withDatabaseUrl(url, () => withStore(async () => 'opened'))).resolves.toBe('opened');
        // A migration this version does not know still goes to kysely, which refuses it (after the lock).
        const store = await openStore({ kind: 'postgres', url }, { migrate: false });
        await store.db
          .insertInto('kysely_migration' as never)
          .values({ name: '2099_01_01_001_from_the_future', timestamp: new Date().toISOString() } as never)
          .execute();
        await store.close();
        const refused = withDatabaseUrl(url, () => withStore(async () => 'opened'));
        await holder.query(`SELECT pg_advisory_unlock(${KYSELY_MIGRATION_LOCK})`);
        await expect(refused).rejects.toThrow(/corrupted migrations.*2099_01_01_001_from_the_future/);
      } finally {
        await holder.end();
      }
    });
  },
);
