import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Client } from 'pg';
import { openStore } from '../../src/store/connect';
import { watchDatabaseHealth } from '../../src/store/health-watch';
import { freshSchemaUrl, memoryPglite } from '../support/databases';

const url = process.env.TEST_DATABASE_URL;

describe('store health', () => {
  it('an embedded store is healthy', async () => {
    const store = await openStore(memoryPglite());
    try {
      expect(await store.healthy()).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('a store whose server does not answer is unhealthy, without throwing', async () => {
    const store = await openStore(
      { kind: 'postgres', url: 'postgres://keel:keel@127.0.0.1:1/x' },
      { migrate: false, log: () => {} },
    );
    try {
      expect(await store.healthy(1_000)).toBe(false);
    } finally {
      await store.close();
    }
  });
});

describe('watchDatabaseHealth', () => {
  it('logs "database unavailable" and "database back" once per transition', async () => {
    const answers = [true, false, false, false, true, true, false];
    const lines: string[] = [];
    let calls = 0;
    const done = new Promise<void>((resolve) => {
      const stop = watchDatabaseHealth({
        intervalMs: 5,
        log: (line) => lines.push(line),
        probe: async () => {
          const ok = answers[calls++] ?? true;
          if (calls === answers.length + 1) {
            stop();
            resolve();
          }
          return ok;
        },
      });
    });
    await done;
    expect(lines).toEqual(['database unavailable', 'database back', 'database unavailable']);
  });

  it('counts a probe that throws as down', async () => {
    const lines: string[] = [];
    await new Promise<void>((resolve) => {
      const stop = watchDatabaseHealth({
        intervalMs: 5,
        log: (line) => {
          lines.push(line);
          stop();
          resolve();
        },
        probe: () => Promise.reject(new Error('boom')),
      });
    });
    expect(lines).toEqual(['database unavailable']);
  });
});

if (!url) console.log('connection-loss: the PostgreSQL restart test needs a server; set TEST_DATABASE_URL to run it');
(url ? describe : describe.skip)('a store on PostgreSQL whose connections are terminated', () => {
  it('survives (the pool error is logged, not thrown) and the next query succeeds', async () => {
    // A unique application_name, so only this store's connections are terminated.
    const appName = `keel-conn-loss-${randomBytes(4).toString('hex')}`;
    const u = new URL(await freshSchemaUrl(url!));
    u.searchParams.set('application_name', appName);
    const logged: string[] = [];
    const store = await openStore(
      { kind: 'postgres', url: u.toString(), maxConnections: 3 },
      { log: (line) => logged.push(line) },
    );
    try {
      // Several idle clients in the pool.
      await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(store.db)));
      const admin = new Client({ connectionString: url });
      await admin.connect();
      let terminated = 0;
      try {
        const killed = await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and application_name = $1',
          [appName],
        );
        expect(killed.rowCount).toBeGreaterThan(0);
        terminated = killed.rowCount!;
      } finally {
        await admin.end();
      }
      // The idle clients' error events arrive asynchronously, one per client: wait for all of them (a
      // client whose event has not arrived yet is still in the pool and would fail the next query).
      for (let i = 0; i < 250 && logged.length < terminated; i++) await new Promise((r) => setTimeout(r, 20));
      expect(logged).toHaveLength(terminated);
      expect(logged[0]).toMatch(/^keel store: idle database connection lost \(.*\); reconnecting on next use$/);
      const r = await sql<{ one: number }>`select 1 as one`.execute(store.db);
      expect(r.rows[0]!.one).toBe(1);
      expect(await store.healthy()).toBe(true);
    } finally {
      await store.close();
    }
  });
});
