import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { openStore, type Store } from '../../src/store/connect';
import { migratedPgliteTemplate } from './pglite-template';
import { recordSuiteSchema, testSchemaName } from './stale-schemas';

/** A database a suite runs against: PGlite always, a PostgreSQL server too when TEST_DATABASE_URL is set. */
export interface TestDatabase {
  readonly name: 'pglite' | 'postgres';
  /** Opens a fresh, migrated, empty database (a new PGlite, or a new schema on the server). */
  open(): Promise<Store>;
}

export function testDatabases(): TestDatabase[] {
  const list: TestDatabase[] = [{ name: 'pglite', open: () => openEmptyPglite() }];
  const url = process.env.TEST_DATABASE_URL;
  if (url) list.push({ name: 'postgres', open: () => openFreshSchema(url) });
  return list;
}

/** A PostgreSQL URL whose search_path is a new, empty schema: suites never see each other's rows. */
export async function freshSchemaUrl(url: string): Promise<string> {
  const schema = testSchemaName(randomBytes(4).toString('hex'));
  recordSuiteSchema(schema);
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

async function openFreshSchema(url: string): Promise<Store> {
  return openStore({ kind: 'postgres', url: await freshSchemaUrl(url), maxConnections: 5 });
}

/** A new in-memory PGlite store, from the run's migrated template when there is one. */
function openEmptyPglite(): Promise<Store> {
  return openStore(memoryPglite());
}

/** The store target of a new in-memory PGlite, started from the run's migrated template when there is one. */
export function memoryPglite(): { kind: 'pglite'; dataDir: string; loadDataDir?: Blob } {
  const template = migratedPgliteTemplate();
  return { kind: 'pglite', dataDir: 'memory://', ...(template ? { loadDataDir: template } : {}) };
}
