/**
 * The two search indexes hold only rows that have the column they index: every row lacks one of the
 * two (a plain row has no blind-index terms, a sealed row no tsvector, an imported row neither until
 * it is indexed), and an index entry for NULL is work on every insert that no search reads. The
 * matching operators imply NOT NULL, so the searches' own predicates still reach the indexes.
 *
 * Joint statistics of (agent_id, session_id): without them the planner multiplies the agent's share
 * of the table by the session's, as if the two were independent, and takes a large session for a
 * small one. A search then ANDs a rare word's few text-index matches with a scan of the session's
 * whole key range (bench/history-search.ts, beside other sessions).
 */
import { sql } from 'kysely';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';

describe.each(testDatabases())('the search indexes and statistics, on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(async () => store.close());

  it('leave out rows without the indexed column', async () => {
    const { rows } = await sql<{ name: string; def: string }>`select indexname as name, indexdef as def from pg_indexes
      where schemaname = current_schema() and indexname in ('transcript_entries_search_idx', 'transcript_entries_terms_idx') order by indexname`.execute(
      store.db,
    );
    expect(rows).toEqual([
      {
        name: 'transcript_entries_search_idx',
        def: expect.stringMatching(/USING gin \(search_vector\) WHERE \(search_vector IS NOT NULL\)$/),
      },
      {
        name: 'transcript_entries_terms_idx',
        def: expect.stringMatching(/USING gin \(search_terms\) WHERE \(search_terms IS NOT NULL\)$/),
      },
    ]);
  });

  it.each([
    [
      'a word in the text index',
      sql`search_vector @@ (plainto_tsquery('simple', 'wombat') || plainto_tsquery('simple', 'order'))`,
      'transcript_entries_search_idx',
    ],
    ['a blind-index term', sql`search_terms && array['h1', 'h2']::text[]`, 'transcript_entries_terms_idx'],
  ])('are what a search for %s reads', async (_what, predicate, index) => {
    await sql`
      insert into transcript_entries (agent_id, session_id, id, type, role, payload, byte_size, created_at, search_vector, search_terms)
      select 'me', 's1', 'e' || g, 'message', 'user', '{}'::jsonb, 10, now(),
             case when g % 2 = 0 then to_tsvector('simple', 'order ' || g) end, case when g % 3 = 0 then array['h' || g] end
      from generate_series(1, 2000) g`.execute(store.db);
    await sql`analyze transcript_entries`.execute(store.db);
    // Sequential scans priced out: an index the predicate cannot use would leave one in the plan anyway.
    const plan = await store.db.connection().execute(async (conn) => {
      await sql`set enable_seqscan = off`.execute(conn);
      const { rows } = await sql<{
        'QUERY PLAN': unknown;
      }>`explain (format json) select id from transcript_entries where ${predicate}`.execute(conn);
      await sql`reset enable_seqscan`.execute(conn);
      return JSON.stringify(rows[0]!['QUERY PLAN']);
    });
    expect(plan).toContain(index);
    expect(plan).not.toContain('Seq Scan');
  });

  it('let the planner estimate a large session at its real size beside the other sessions of the table', async () => {
    // One session of 6,000 rows (agent "big"), and 12,000 rows of 20 sessions of 20 other agents.
    await sql`
      insert into transcript_entries (agent_id, session_id, id, type, role, payload, byte_size, created_at)
      select case when g <= 6000 then 'big' else 'other' || (g % 20) end, case when g <= 6000 then 'big-session' else 'session-' || (g % 20) end,
             'e' || g, 'message', 'user', '{}'::jsonb, 10, now()
      from generate_series(1, 18000) g`.execute(store.db);
    await sql`analyze transcript_entries`.execute(store.db);
    const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`
      explain (format json) select id from transcript_entries where agent_id = 'big' and session_id in ('big-session')`.execute(
      store.db,
    );
    const estimated = rows[0]!['QUERY PLAN'][0]!.Plan['Plan Rows'];
    // Independence would say 18,000 × 1/3 × 1/3 = 2,000.
    expect(estimated).toBeGreaterThan(5_000);
    expect(estimated).toBeLessThan(7_000);
  });
});
