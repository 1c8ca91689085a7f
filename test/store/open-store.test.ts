/**
 * How a store opens: kysely's introspection (its migrator's) reads only Keel's own schema however many
 * others share the database, and an embedded store can start from a dump of a data folder.
 */
import { Client } from 'pg';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/connect';
import { freshSchemaUrl } from '../support/databases';
import { describeOnPostgres } from '../support/postgres-only';
import { ensureSession } from '../support/ensure-session';
import { dropTestSchemas, testSchemaName } from '../support/stale-schemas';

const NOW = new Date('2026-11-26T10:00:00.000Z');

describeOnPostgres('introspecting a database other schemas share', 'schemas live on the server', () => {
  const url = process.env.TEST_DATABASE_URL ?? '';
  const neighbour = testSchemaName('c0ffee06');
  let store: Store;
  beforeAll(async () => {
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query(
      `create schema "${neighbour}"; create table "${neighbour}".sessions (other int); create table "${neighbour}".elsewhere (x int)`,
    );
    await client.end();
    store = await openStore({ kind: 'postgres', url: await freshSchemaUrl(url), maxConnections: 2 });
  });
  afterAll(async () => {
    await store.close();
    await dropTestSchemas(url, [neighbour]);
  });

  it("lists this schema's tables and columns only, the migrator's own when asked", async () => {
    const tables = await store.db.introspection.getTables();
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(store.db);
    expect(new Set(tables.map((t) => t.schema))).toEqual(new Set([rows[0]!.schema]));
    const names = tables.map((t) => t.name);
    expect(names).toContain('transcript_entries');
    expect(names).not.toContain('elsewhere');
    expect(names).not.toContain('kysely_migration');
    expect((await store.db.introspection.getTables({ withInternalKyselyTables: true })).map((t) => t.name)).toContain(
      'kysely_migration',
    );
    const sessions = tables.filter((t) => t.name === 'sessions');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.columns.map((c) => c.name)).toContain('session_key');
    const seq = tables.find((t) => t.name === 'transcript_entries')!.columns.find((c) => c.name === 'seq')!;
    expect(seq).toMatchObject({ dataType: 'int8', isAutoIncrementing: true, isNullable: false, hasDefaultValue: true });
    const label = sessions[0]!.columns.find((c) => c.name === 'label')!;
    expect(label).toMatchObject({
      dataType: 'text',
      isAutoIncrementing: false,
      isNullable: true,
      hasDefaultValue: false,
    });
  });
});

describe('an embedded store started from a dump of a data folder', () => {
  it('holds what the dumped database held, and takes writes', async () => {
    const first = await openStore({ kind: 'pglite', dataDir: 'memory://' });
    await ensureSession(first.db, { agentId: 'a', sessionKey: 'agent:a:main', newSessionId: 's1', now: NOW });
    const dump = await first.pglite!.dumpDataDir('none');
    await first.close();
    const second = await openStore({ kind: 'pglite', dataDir: 'memory://', loadDataDir: dump });
    try {
      await ensureSession(second.db, { agentId: 'a', sessionKey: 'agent:a:other', newSessionId: 's2', now: NOW });
      const rows = await second.db
        .selectFrom('sessions')
        .select(['session_key', 'session_id'])
        .orderBy('session_key')
        .execute();
      expect(rows).toEqual([
        { session_key: 'agent:a:main', session_id: 's1' },
        { session_key: 'agent:a:other', session_id: 's2' },
      ]);
    } finally {
      await second.close();
    }
  });
});
