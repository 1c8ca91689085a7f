import { Client } from 'pg';
import { describeOnPostgres } from '../support/postgres-only';
import { PgReplyStreamSubscriber } from '../../src/streaming/pg-reply-subscriber';

describeOnPostgres('PgReplyStreamSubscriber', 'it LISTENs on a PostgreSQL server', () => {
  const url = process.env.TEST_DATABASE_URL!;
  let admin: Client;
  beforeAll(async () => {
    admin = new Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => admin.end());

  it('hears NOTIFY on its own connection, and listens again after that connection is killed', async () => {
    const channel = `keel_reply_test_${Math.random().toString(36).slice(2, 10)}`;
    const lines: string[] = [];
    const subscriber = new PgReplyStreamSubscriber({
      connectionString: url,
      reconnectDelayMs: 50,
      log: (l) => lines.push(l),
    });
    const heard: string[] = [];
    const stop = await subscriber.listen(channel, (p) => heard.push(p));
    try {
      await admin.query('select pg_notify($1, $2)', [channel, 'first']);
      await until(() => heard.includes('first'));

      // The subscriber's backend dies (a server restart, a failover): it reconnects and LISTENs again.
      const { rows } = await admin.query<{ pid: number }>(`select pid from pg_stat_activity where query = $1`, [
        `LISTEN "${channel}"`,
      ]);
      expect(rows).toHaveLength(1);
      await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
      await until(async () => {
        await admin.query('select pg_notify($1, $2)', [channel, 'after reconnect']);
        return heard.includes('after reconnect');
      });
      expect(lines.some((l) => l.includes('database connection lost'))).toBe(true);
      expect(heard[0]).toBe('first');
    } finally {
      await stop();
      await subscriber.close();
    }
  }, 60_000);
});

/** Polls `check` every 100 ms for up to 20 s; fails the test when it never holds. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition never held');
}
