/**
 * On PostgreSQL the statements `compiledOnce` builds run as named prepared statements: parsed once
 * per connection, not on every run. A statement prepared before a migration added a column to its
 * table is prepared again instead of failing ("cached plan must not change result type"), and a
 * store opened with prepared statements off prepares nothing.
 */
import { sql } from 'kysely';
import { freshSchemaUrl } from '../support/databases';
import { openStore, type Store } from '../../src/store/connect';
import { compiledOnce } from '../../src/store/compiled-once';
import { describeOnPostgres } from '../support/postgres-only';
import type { Database } from '../../src/store/schema';
import type { Kysely } from 'kysely';

const url = process.env.TEST_DATABASE_URL;

// A table of the test's own, read through the kysely handle as if it were Keel's.
const rowsOf = compiledOnce('prepared statements test read', (db, v: { a: number }) =>
  (db as unknown as Kysely<Record<string, Record<string, unknown>>>)
    .selectFrom('prepared_probe')
    .selectAll()
    .where('a', '=', v.a),
) as unknown as (db: Kysely<Database>, v: { a: number }) => Promise<Array<Record<string, unknown>>>;

describeOnPostgres('prepared statements', 'PGlite runs through no pg client, so nothing is prepared there', () => {
  let store: Store;
  afterEach(async () => store?.close());

  const open = async (preparedStatements?: boolean) => {
    // One connection: the prepared statements seen are the ones the runs used.
    store = await openStore({
      kind: 'postgres',
      url: await freshSchemaUrl(url!),
      maxConnections: 1,
      ...(preparedStatements === undefined ? {} : { preparedStatements }),
    });
    await sql`create table prepared_probe (a int)`.execute(store.db);
    await sql`insert into prepared_probe values (1)`.execute(store.db);
  };
  const prepared = async () =>
    (
      await sql<{ name: string }>`select name from pg_prepared_statements where name like 'keel_%'`.execute(store.db)
    ).rows.map((r) => r.name);

  it('prepares a compiled-once statement once per connection and runs it by name after', async () => {
    await open();
    expect(await rowsOf(store.db, { a: 1 })).toEqual([{ a: 1 }]);
    const names = await prepared();
    expect(names).toHaveLength(1);
    expect(await rowsOf(store.db, { a: 1 })).toEqual([{ a: 1 }]);
    expect(await prepared()).toEqual(names);
  });

  it('prepares a statement again when a migration changed its columns', async () => {
    await open();
    expect(await rowsOf(store.db, { a: 1 })).toEqual([{ a: 1 }]);
    await sql`alter table prepared_probe add column b text default 'new'`.execute(store.db);
    expect(await rowsOf(store.db, { a: 1 })).toEqual([{ a: 1, b: 'new' }]);
  });

  it('inside a transaction the changed statement fails with it, and the retry runs', async () => {
    await open();
    expect(await rowsOf(store.db, { a: 1 })).toEqual([{ a: 1 }]);
    await sql`alter table prepared_probe add column b text default 'new'`.execute(store.db);
    // The transaction the error aborted cannot run the statement again; the next attempt can.
    await expect(store.db.transaction().execute(async (trx) => rowsOf(trx, { a: 1 }))).rejects.toThrow(
      /current transaction is aborted|cached plan/,
    );
    expect(await store.db.transaction().execute(async (trx) => rowsOf(trx, { a: 1 }))).toEqual([{ a: 1, b: 'new' }]);
  });

  it('prepares nothing when turned off', async () => {
    await open(false);
    expect(await rowsOf(store.db, { a: 1 })).toEqual([{ a: 1 }]);
    expect(await prepared()).toEqual([]);
  });
});
