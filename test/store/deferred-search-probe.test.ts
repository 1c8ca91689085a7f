/**
 * A search first asks whether its sessions have unindexed rows (an import's). That probe must read
 * the small partial index of unindexed rows, even when another agent's import left unindexed rows all
 * over the table: PostgreSQL otherwise guessed that a LIMIT-bounded scan of the whole table would find
 * some soon, and read every row for none (~150 ms at 250k rows).
 */
import { sql } from 'kysely';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { deferredRows, indexDeferredEntries, sessionsDeferredRows } from '../../src/store/deferred-search-index';

describe.each(testDatabases())('the deferred-index probe of a search, on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(async () => store.close());

  it('reads the index of unindexed rows when another agent left many, and finds exactly its own', async () => {
    const row = (agent: string, indexed: boolean) => sql`
      insert into transcript_entries (agent_id, session_id, id, type, role, payload, byte_size, created_at, search_vector)
      select ${agent}, 's1', 'e' || g, 'message', 'user', jsonb_build_object('type', 'message', 'id', 'e' || g, 'message', jsonb_build_object('role', 'user', 'content', 'order ' || g)),
             10, now(), ${indexed ? sql`to_tsvector('simple', 'order ' || g)` : sql`null`}
      from generate_series(1, 20000) g`;
    await row('imported', false).execute(store.db);
    await row('me', true).execute(store.db);
    await sql`analyze transcript_entries`.execute(store.db);

    const probe = deferredRows(store.db, (qb) => sessionsDeferredRows(qb, 'me', ['s1'])).compile();
    const { rows } = await sql<{
      'QUERY PLAN': unknown;
    }>`explain (format json) ${sql.raw(inline(probe.sql, probe.parameters))}`.execute(store.db);
    const plan = JSON.stringify(rows[0]!['QUERY PLAN']);
    expect(plan).toContain('transcript_entries_unindexed_idx');
    expect(plan).not.toContain('Seq Scan');

    // Its own unindexed row is found and indexed; the other agent's stay for maintenance.
    await sql`update transcript_entries set search_vector = null where agent_id = 'me' and id = 'e7'`.execute(store.db);
    expect(await indexDeferredEntries(store.db, 'me', ['s1'])).toBe(1);
    expect(await indexDeferredEntries(store.db, 'me', ['s1'])).toBe(0);
  });

  it("leaves nothing in the text index's pending list after indexing, so searches read the index proper", async () => {
    const pendingPages = async () =>
      Number(
        (
          await sql<{
            pages: number;
          }>`select gin_clean_pending_list('transcript_entries_search_idx'::regclass)::int as pages`.execute(store.db)
        ).rows[0]!.pages,
      );
    const unindexed = (session: string) => sql`
      insert into transcript_entries (agent_id, session_id, id, type, role, payload, byte_size, created_at)
      select 'me', ${session}, 'e' || g, 'message', 'user', jsonb_build_object('type', 'message', 'id', 'e' || g, 'message', jsonb_build_object('role', 'user', 'content', 'order ' || g || ' shipped')),
             10, now()
      from generate_series(1, 3000) g`;
    // Without the merge, rows written to the index wait in its pending list (what the merge clears).
    await unindexed('s1').execute(store.db);
    await sql`update transcript_entries set search_vector = to_tsvector('simple', payload->'message'->>'content') where session_id = 's1'`.execute(
      store.db,
    );
    expect(await pendingPages()).toBeGreaterThan(0);

    await unindexed('s2').execute(store.db);
    expect(await indexDeferredEntries(store.db, 'me', ['s2'])).toBe(3000);
    expect(await pendingPages()).toBe(0);
  });
});

/** The compiled statement with its parameters written in, for EXPLAIN (which takes no bind parameters here). */
function inline(text: string, parameters: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const value = parameters[Number(n) - 1];
    return typeof value === 'number' ? String(value) : `'${String(value).replace(/'/g, "''")}'`;
  });
}
