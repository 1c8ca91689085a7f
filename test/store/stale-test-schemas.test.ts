/**
 * The test run's own hygiene on a shared PostgreSQL server: schemas earlier runs left are dropped at
 * the next run's start, never a schema a run going on beside it still uses.
 */
import { Client } from 'pg';
import { describeOnPostgres } from '../support/postgres-only';
import { dropStaleTestSchemas, dropTestSchemas, testSchemaName } from '../support/stale-schemas';

const url = process.env.TEST_DATABASE_URL ?? '';
const HOUR = 60 * 60_000;

describeOnPostgres('dropping test schemas earlier runs left', 'the schemas live on the server', () => {
  it('drops schemas older than any run and those named before names carried a time; keeps a recent one', async () => {
    const client = new Client({ connectionString: url });
    await client.connect();
    const exists = async (name: string) =>
      (await client.query('select 1 from pg_namespace where nspname = $1', [name])).rowCount === 1;
    try {
      const legacy = `keel_test_${'0123456789ab'}`;
      const recent = testSchemaName('c0ffee01');
      // Named as a run seven hours ago would have named it.
      const old = `keel_test_${(Date.now() - 7 * HOUR).toString(36)}_c0ffee02`;
      for (const name of [legacy, recent, old]) await client.query(`create schema if not exists "${name}"`);
      await client.query(`create table "${old}".t (id int)`);
      const dropped = await dropStaleTestSchemas(url);
      expect(dropped).toBeGreaterThanOrEqual(2);
      expect([await exists(legacy), await exists(old), await exists(recent)]).toEqual([false, false, true]);
      await client.query(`drop schema "${recent}"`);
    } finally {
      await client.end();
    }
  });

  it("drops a suite's own schemas when it ends, leaving one a transaction still holds for the next sweep", async () => {
    const client = new Client({ connectionString: url });
    const holder = new Client({ connectionString: url });
    await Promise.all([client.connect(), holder.connect()]);
    const exists = async (name: string) =>
      (await client.query('select 1 from pg_namespace where nspname = $1', [name])).rowCount === 1;
    const [mine, held, other] = ['c0ffee03', 'c0ffee04', 'c0ffee05'].map(testSchemaName) as [string, string, string];
    try {
      for (const name of [mine, held, other])
        await client.query(`create schema "${name}"; create table "${name}".t (id int)`);
      await holder.query('begin');
      await holder.query(`lock table "${held}".t in access share mode`);
      const dropped = await dropTestSchemas(url, [mine, held, `${mine}_gone`]);
      expect(dropped).toBe(2);
      expect([await exists(mine), await exists(held), await exists(other)]).toEqual([false, true, true]);
      await expect(dropTestSchemas(url, ['public'])).rejects.toThrow('not a test schema: public');
    } finally {
      await holder.query('rollback');
      await client.query(`drop schema if exists "${held}" cascade; drop schema if exists "${other}" cascade`);
      await Promise.all([client.end(), holder.end()]);
    }
  });
});
