/**
 * Joint statistics of (agent_id, session_id): without them the planner multiplies the agent's share
 * of the table by the session's, as if the two were independent, and takes a large session for a
 * small one. A search then ANDs a rare word's few text-index matches with a scan of the session's
 * whole key range (bench/history-search.ts, beside other sessions).
 */
import { sql } from 'kysely';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';

describe.each(testDatabases())('the planner\'s view of a session, on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(async () => store.close());

  it('estimates a large session at its real size beside the other sessions of the table', async () => {
    // One session of 6,000 rows (agent "big"), and 12,000 rows of 20 sessions of 20 other agents.
    await sql`
      insert into transcript_entries (agent_id, session_id, id, type, role, payload, byte_size, created_at)
      select case when g <= 6000 then 'big' else 'other' || (g % 20) end, case when g <= 6000 then 'big-session' else 'session-' || (g % 20) end,
             'e' || g, 'message', 'user', '{}'::jsonb, 10, now()
      from generate_series(1, 18000) g`.execute(store.db);
    await sql`analyze transcript_entries`.execute(store.db);
    const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`
      explain (format json) select id from transcript_entries where agent_id = 'big' and session_id in ('big-session')`.execute(store.db);
    const estimated = rows[0]!['QUERY PLAN'][0]!.Plan['Plan Rows'];
    // Independence would say 18,000 × 1/3 × 1/3 = 2,000.
    expect(estimated).toBeGreaterThan(5_000);
    expect(estimated).toBeLessThan(7_000);
  });
});
