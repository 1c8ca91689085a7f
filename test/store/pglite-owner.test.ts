import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Client } from 'pg';
import { openStore, type Store } from '../../src/store/connect';
import { servePglite, type ServedPglite } from '../../src/store/pglite-server';
import { PgliteReplyStreamSubscriber } from '../../src/streaming/reply-subscriber';

/**
 * The process that owns a PGlite folder uses it in-process (the worker's pool) and serves it to
 * other processes over a socket; PGlite is one database session, so the two must take turns by
 * whole units of work (a transaction, an extended-protocol exchange), never interleave.
 */
describe('one PGlite folder served to other processes', () => {
  let dataDir: string;
  let store: Store;
  let served: ServedPglite;
  const clients: Client[] = [];
  const connect = async () => {
    const client = new Client({ connectionString: served.url });
    await client.connect();
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'keel-owner-')), 'db');
    store = await openStore({ kind: 'pglite', dataDir });
    served = await servePglite(store.pglite!, store.pgliteLock!);
    await sql`create table scratch (x int)`.execute(store.db);
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => {});
    await served.close();
    await store.close();
  });

  it('an in-process query waits for a socket client’s open transaction instead of reading inside it', async () => {
    const other = await connect();
    await other.query('BEGIN');
    await other.query('INSERT INTO scratch VALUES (1)');
    // Issued while the other process's transaction is open; it must not see (or join) it.
    const counted = sql<{ n: number }>`select count(*)::int as n from scratch`.execute(store.db);
    await other.query('ROLLBACK');
    expect((await counted).rows[0]!.n).toBe(0);
  });

  it('a socket client waits for an in-process transaction instead of reading inside it', async () => {
    const other = await connect();
    let counted: Promise<{ rows: Array<{ n: number }> }> | undefined;
    await store.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into scratch values (1)`.execute(trx);
        counted = other.query<{ n: number }>('select count(*)::int as n from scratch');
        // Give the socket query every chance to run now (it must not).
        await new Promise((resolve) => setTimeout(resolve, 200));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect((await counted!).rows[0]!.n).toBe(0);
  });

  it('parameterized queries of several clients never cross (each Parse…Sync exchange runs whole)', async () => {
    const [a, b, c] = [await connect(), await connect(), await connect()];
    const run = async (client: Client, tag: number) => {
      const diffs: number[] = [];
      for (let i = 0; i < 30; i++) diffs.push((await client.query<{ v: number }>('select $1::int as v', [tag * 1000 + i])).rows[0]!.v - (tag * 1000 + i));
      return diffs;
    };
    const diffs = (await Promise.all([run(a, 1), run(b, 2), run(c, 3), Promise.all(Array.from({ length: 30 }, (_, i) => sql<{ v: number }>`select ${i}::int as v`.execute(store.db).then((r) => r.rows[0]!.v - i)))])).flat();
    expect(diffs.every((d) => d === 0)).toBe(true);
  });

  it('a client that disconnects inside a transaction leaves nothing behind: its transaction is rolled back', async () => {
    const other = await connect();
    await other.query('BEGIN');
    await other.query('INSERT INTO scratch VALUES (1)');
    await other.end();
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from scratch`.execute(store.db);
    expect(rows[0]!.n).toBe(0);
    expect(store.pglite!.isInTransaction()).toBe(false);
  });

  it('in-process LISTEN keeps hearing in-process NOTIFY while socket clients come and go', async () => {
    const heard: string[] = [];
    const stop = await new PgliteReplyStreamSubscriber(store.pglite!, store.pgliteLock!).listen('keel_owner_test', (p) => heard.push(p));
    const other = await connect();
    await other.query('INSERT INTO scratch VALUES (1)');
    await sql`select pg_notify('keel_owner_test', 'chunk')`.execute(store.db);
    await stop();
    expect(heard).toEqual(['chunk']);
  });

  it('a second open of the folder in this process is refused, naming the folder', async () => {
    await expect(openStore({ kind: 'pglite', dataDir })).rejects.toThrow(`the PGlite folder ${dataDir} is already open in this process`);
  });
});
