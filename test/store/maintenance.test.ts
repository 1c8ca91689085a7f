import { sql, type Kysely } from 'kysely';
import { migrateToLatest } from '../../src/store/migrations';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import type { Database } from '../../src/store/schema';
import { appendEntries, countEntries, loadActiveEntries, type EntryToAppend } from '../../src/store/entries-repo';
import { getSession, rotateSession } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import { sessionIdsOfKey } from '../../src/store/session-ids-repo';
import { InvalidMaintenanceOptionsError, runMaintenance } from '../../src/store/maintenance';
import { allEntries } from '../support/store-readers';

const DAY = 86_400_000;
const NOW = new Date(Date.UTC(2026, 5, 1));
const ts = (i: number) => new Date(NOW.getTime() - 40 * DAY + i * 1000).toISOString();
const message = (id: string, i: number): EntryToAppend => ({
  entry: { type: 'message', id, parentId: null, timestamp: ts(i), message: { role: 'user', content: id } },
  tokenEstimate: 1,
});
const header = (sessionId: string): EntryToAppend => ({
  entry: { type: 'session', id: sessionId, timestamp: ts(0) },
  tokenEstimate: null,
});
const compaction = (id: string, i: number, firstKeptEntryId: string): EntryToAppend => ({
  entry: { type: 'compaction', id, parentId: null, timestamp: ts(i), summary: 's', firstKeptEntryId, tokensBefore: 1 },
  tokenEstimate: null,
});

describe.each(testDatabases())('runMaintenance on $name', (database) => {
  let store: Store;
  let db: Kysely<Database>;
  beforeEach(async () => {
    store = await database.open();
    db = store.db;
  });
  afterEach(async () => store.close());

  async function session(
    agentId: string,
    key: string,
    sessionId: string,
    ageDays: number,
    entries: EntryToAppend[] = [],
  ) {
    await ensureSession(db, {
      agentId,
      sessionKey: key,
      newSessionId: sessionId,
      now: new Date(NOW.getTime() - ageDays * DAY),
    });
    if (entries.length > 0) await appendEntries(db, agentId, sessionId, entries);
  }

  describe('pruning', () => {
    beforeEach(async () => {
      await session('A', 'agent:A:old', 'old', 31, [header('old'), message('o1', 1)]);
      await session('A', 'agent:A:fresh', 'fresh', 29, [header('fresh'), message('f1', 1)]);
      await session('B', 'agent:B:old', 'oldB', 45, [message('b1', 1)]);
    });

    it('reports sessions older than pruneAfterDays in warn mode and deletes nothing', async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'warn' });
      expect(report.mode).toBe('warn');
      expect(report.sessionsPruned.map((s) => [s.agentId, s.sessionKey, s.entries])).toEqual([
        ['B', 'agent:B:old', 1],
        ['A', 'agent:A:old', 2],
      ]);
      expect(await getSession(db, 'A', 'agent:A:old')).toBeDefined();
      expect(await countEntries(db, 'A', 'old')).toBe(2);
    });

    it('deletes the session rows and their transcripts in enforce mode', async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce' });
      expect(report.sessionsPruned).toHaveLength(2);
      expect(await getSession(db, 'A', 'agent:A:old')).toBeUndefined();
      expect(await countEntries(db, 'A', 'old')).toBe(0);
      expect(await getSession(db, 'A', 'agent:A:fresh')).toBeDefined();
      expect(await countEntries(db, 'A', 'fresh')).toBe(2);
    });

    it('only touches the given agent when agentId is set', async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce', agentId: 'A' });
      expect(report.sessionsPruned.map((s) => s.sessionKey)).toEqual(['agent:A:old']);
      expect(await getSession(db, 'B', 'agent:B:old')).toBeDefined();
    });

    it.each([
      [10, ['agent:B:old', 'agent:A:old', 'agent:A:fresh']],
      [40, ['agent:B:old']],
      [0, []],
    ])('uses pruneAfterDays = %d (0 disables)', async (pruneAfterDays, keys) => {
      const report = await runMaintenance(db, { now: NOW, pruneAfterDays });
      expect(report.sessionsPruned.map((s) => s.sessionKey)).toEqual(keys);
    });
  });

  describe('capping', () => {
    // header, m0..m9, compaction c1 (keeps from m7), m10..m11: 14 entries; active window m7..m11.
    const entries = (): EntryToAppend[] => [
      header('s1'),
      ...Array.from({ length: 10 }, (_, i) => message(`m${i}`, i + 1)),
      compaction('c1', 11, 'm7'),
      message('m10', 12),
      message('m11', 13),
    ];
    beforeEach(async () => session('A', 'agent:A:main', 's1', 1, entries()));

    it('removes the oldest entries beyond the cap, keeping the header and never changing the active window', async () => {
      const before = await loadActiveEntries(db, 'A', 's1');
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce', maxEntries: 8 });
      expect(report.entriesCapped).toEqual([
        { agentId: 'A', sessionKey: 'agent:A:main', sessionId: 's1', removed: 5, keptOverCap: 1 },
      ]);
      // The newest 8 are m5..m11 (c1 included); the header is kept on top of them.
      expect((await allEntries(db, 'A', 's1')).map((r) => r.id)).toEqual([
        's1',
        'm5',
        'm6',
        'm7',
        'm8',
        'm9',
        'c1',
        'm10',
        'm11',
      ]);
      // The window is unchanged; only the summarized range named for recall lost its capped entries.
      const { summarized: _capped, ...after } = await loadActiveEntries(db, 'A', 's1');
      expect(after).toEqual({
        compaction: before.compaction,
        rows: before.rows,
        lastCompactionSeq: before.lastCompactionSeq,
      });
    });

    it('keeps the whole active window and the newest compaction even when they exceed the cap', async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce', maxEntries: 3 });
      expect(report.entriesCapped[0]).toMatchObject({ removed: 7, keptOverCap: 4 });
      expect((await allEntries(db, 'A', 's1')).map((r) => r.id)).toEqual(['s1', 'm7', 'm8', 'm9', 'c1', 'm10', 'm11']);
    });

    it('reports the same numbers in warn mode without deleting', async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'warn', maxEntries: 8 });
      expect(report.entriesCapped[0]).toMatchObject({ removed: 5, keptOverCap: 1 });
      expect(await countEntries(db, 'A', 's1')).toBe(14);
    });

    it('never caps a session without a compaction: its whole transcript is the active window', async () => {
      await session(
        'A',
        'agent:A:other',
        's2',
        1,
        Array.from({ length: 10 }, (_, i) => message(`n${i}`, i)),
      );
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce', maxEntries: 4 });
      expect(report.entriesCapped.find((c) => c.sessionId === 's2')).toMatchObject({ removed: 0, keptOverCap: 6 });
      expect(await countEntries(db, 'A', 's2')).toBe(10);
    });

    it('leaves sessions at or under the cap out of the report', async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce', maxEntries: 14 });
      expect(report.entriesCapped).toEqual([]);
    });
  });

  describe('every session id of a key', () => {
    const KEY = 'agent:A:main';
    const daysAgo = (d: number) => new Date(NOW.getTime() - d * DAY);
    // r1 (50 → 40 days ago), r2 (40 → 5 days ago, compacted, 14 entries), r3 current since 5 days ago.
    beforeEach(async () => {
      await session('A', KEY, 'r1', 50, [header('r1'), message('r1-m', 1)]);
      expect(await rotateSession(db, { agentId: 'A', sessionKey: KEY, newSessionId: 'r2', now: daysAgo(40) })).toBe(
        true,
      );
      await appendEntries(db, 'A', 'r2', [
        header('r2'),
        ...Array.from({ length: 10 }, (_, i) => message(`m${i}`, i + 1)),
        compaction('c1', 11, 'm7'),
        message('m10', 12),
        message('m11', 13),
      ]);
      expect(await rotateSession(db, { agentId: 'A', sessionKey: KEY, newSessionId: 'r3', now: daysAgo(5) })).toBe(
        true,
      );
      await appendEntries(db, 'A', 'r3', [header('r3'), message('r3-m', 20)]);
    });

    it('rotation records each id once with its span; warn reports rotated transcripts past the limit or over the cap, deleting nothing', async () => {
      expect(await rotateSession(db, { agentId: 'A', sessionKey: KEY, newSessionId: 'r3', now: NOW })).toBe(false);
      expect(await sessionIdsOfKey(db, 'A', KEY)).toEqual([
        { sessionId: 'r1', startedAt: daysAgo(50), endedAt: daysAgo(40), current: false },
        { sessionId: 'r2', startedAt: daysAgo(40), endedAt: daysAgo(5), current: false },
        { sessionId: 'r3', startedAt: daysAgo(5), endedAt: null, current: true },
      ]);
      const report = await runMaintenance(db, { now: NOW, mode: 'warn', maxEntries: 8 });
      expect(report.sessionsPruned).toEqual([]);
      expect(report.transcriptsPruned).toEqual([
        { agentId: 'A', sessionKey: KEY, sessionId: 'r1', endedAt: daysAgo(40), entries: 2 },
      ]);
      expect(report.entriesCapped).toEqual([
        { agentId: 'A', sessionKey: KEY, sessionId: 'r2', removed: 5, keptOverCap: 1 },
      ]);
      expect(await countEntries(db, 'A', 'r1')).toBe(2);
      expect(await countEntries(db, 'A', 'r2')).toBe(14);
    });

    it('enforce prunes and caps rotated transcripts, leaves the current one; a pruned key takes every transcript and its history', async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce', maxEntries: 8 });
      expect(report.transcriptsPruned.map((t) => [t.sessionId, t.entries])).toEqual([['r1', 2]]);
      expect(report.entriesCapped.map((c) => [c.sessionId, c.removed])).toEqual([['r2', 5]]);
      expect(await countEntries(db, 'A', 'r1')).toBe(0);
      expect((await allEntries(db, 'A', 'r2')).map((r) => r.id)).toEqual([
        'r2',
        'm5',
        'm6',
        'm7',
        'm8',
        'm9',
        'c1',
        'm10',
        'm11',
      ]);
      expect(await countEntries(db, 'A', 'r3')).toBe(2);
      expect((await sessionIdsOfKey(db, 'A', KEY)).map((s) => s.sessionId)).toEqual(['r2', 'r3']);

      await db
        .updateTable('sessions')
        .set({ updated_at: daysAgo(31) })
        .where('agent_id', '=', 'A')
        .execute();
      const warned = await runMaintenance(db, { now: NOW, mode: 'warn' });
      expect(warned.sessionsPruned.map((s) => [s.sessionKey, s.entries])).toEqual([[KEY, 11]]);
      expect(warned.transcriptsPruned).toEqual([]);
      await runMaintenance(db, { now: NOW, mode: 'enforce' });
      for (const id of ['r2', 'r3']) expect(await countEntries(db, 'A', id)).toBe(0);
      expect(await sessionIdsOfKey(db, 'A', KEY)).toEqual([]);
    });

    it('the migration backfills the ids it can key: current ones, then those named by compactions and memory rows', async () => {
      // Back to the schema before the history: drop it and forget its migration, then migrate again.
      await sql`drop table session_ids`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_24_004_session_ids'`.execute(db);
      await appendEntries(db, 'A', 'lost', [message('lost-m', 1)]);
      await db
        .insertInto('memory_notes')
        .values({
          id: 'n1',
          agent_id: 'A',
          session_key: KEY,
          session_id: 'r1',
          day: '2026-04-20',
          text: 'note',
          compaction_cycle: 0,
          created_at: daysAgo(45),
        })
        .execute();
      await db
        .insertInto('compactions')
        .values({
          id: 'c-r2',
          agent_id: 'A',
          session_key: KEY,
          session_id: 'r2',
          trigger: 'manual',
          status: 'succeeded',
          started_at: daysAgo(20),
        })
        .execute();
      // The later migrations run again too: forget the history search columns (they come back backfilled).
      await sql`alter table transcript_entries drop column search_vector, drop column search_terms`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_24_005_history_search'`.execute(db);
      await sql`alter table compactions drop column revert_of, drop column rerun_of, drop column summary, drop column summarizer_model, drop column summarizer_calls, drop column summarizer_tokens, drop column spend_limited`.execute(
        db,
      );
      await sql`drop index compactions_spend_idx`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_25_001_reversible_compaction'`.execute(db);
      // (Dropping the search columns dropped the partial index of unindexed rows with them.)
      await sql`delete from kysely_migration where name = '2026_11_25_002_deferred_search_index'`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_25_003_unindexed_excludes_sealed'`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_26_001_unindexed_by_seq'`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_26_002_search_indexes_skip_nulls'`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_27_001_session_statistics'`.execute(db);
      // Windows learned before the session's estimate scale had the prompt's shortfall in them; the
      // scale was one per session before it was kept per model.
      await sql`alter table sessions drop column estimate_scales, drop column estimate_scale`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_27_002_session_estimate_scale'`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_27_003_session_estimate_scales'`.execute(db);
      // Indexed again by search terms (stems without stop words): the backfilled vectors are let go.
      await sql`delete from kysely_migration where name = '2026_11_28_001_search_by_terms'`.execute(db);
      await sql`alter table compactions drop column summarizer_input_tokens, drop column summarizer_cache_read_tokens, drop column summarizer_cache_write_tokens, drop column summarizer_output_tokens`.execute(
        db,
      );
      await sql`delete from kysely_migration where name = '2026_11_29_001_compaction_billing'`.execute(db);
      await sql`alter table sessions drop column prompt_system_tokens, drop column prompt_workspace_tokens, drop column prompt_tool_tokens`.execute(
        db,
      );
      await sql`delete from kysely_migration where name = '2026_11_29_002_session_prompt_overhead'`.execute(db);
      await sql`drop table tool_approvals`.execute(db);
      await sql`delete from kysely_migration where name = '2026_11_29_003_tool_approvals'`.execute(db);
      await sql`drop table entry_embeddings, embedding_models`.execute(db);
      await sql`delete from kysely_migration where name = '2026_12_07_001_entry_embeddings'`.execute(db);
      await sql`alter table subagent_runs drop column budget`.execute(db);
      await sql`delete from kysely_migration where name = '2026_12_07_002_subagent_run_budget'`.execute(db);
      await sql`alter table sessions drop column usage_estimated`.execute(db);
      await sql`alter table compactions drop column summarizer_usage_estimated`.execute(db);
      await sql`delete from kysely_migration where name = '2026_12_07_003_estimated_usage'`.execute(db);
      await sql`alter table transcript_entries drop column off_branch`.execute(db);
      await sql`delete from kysely_migration where name = '2026_12_07_004_off_branch_entries'`.execute(db);
      await sql`drop table memory_note_embeddings`.execute(db);
      await sql`delete from kysely_migration where name = '2026_12_07_005_memory_note_embeddings'`.execute(db);
      await db
        .insertInto('model_limits')
        .values([
          {
            model: 'stated',
            context_window: 10_000,
            provider_max_tokens: 30_000,
            provider_message: 'prompt is too long: 90000 tokens > 30000 maximum',
            learned_at: new Date(),
          },
          {
            model: 'unstated',
            context_window: 50_000,
            provider_max_tokens: null,
            provider_message: 'request too large',
            learned_at: new Date(),
          },
        ])
        .execute();
      expect(await migrateToLatest(db)).toEqual([
        '2026_11_24_004_session_ids',
        '2026_11_24_005_history_search',
        '2026_11_25_001_reversible_compaction',
        '2026_11_25_002_deferred_search_index',
        '2026_11_25_003_unindexed_excludes_sealed',
        '2026_11_26_001_unindexed_by_seq',
        '2026_11_26_002_search_indexes_skip_nulls',
        '2026_11_27_001_session_statistics',
        '2026_11_27_002_session_estimate_scale',
        '2026_11_27_003_session_estimate_scales',
        '2026_11_28_001_search_by_terms',
        '2026_11_29_001_compaction_billing',
        '2026_11_29_002_session_prompt_overhead',
        '2026_11_29_003_tool_approvals',
        '2026_12_07_001_entry_embeddings',
        '2026_12_07_002_subagent_run_budget',
        '2026_12_07_003_estimated_usage',
        '2026_12_07_004_off_branch_entries',
        '2026_12_07_005_memory_note_embeddings',
      ]);
      // Back to the stated maximum less 5%; a window learned without one stays as it was.
      const limits = await db
        .selectFrom('model_limits')
        .select(['model', 'context_window'])
        .where('model', 'in', ['stated', 'unstated'])
        .orderBy('model')
        .execute();
      expect(limits).toEqual([
        { model: 'stated', context_window: 28_500 },
        { model: 'unstated', context_window: 50_000 },
      ]);
      // Sealed rows from before history_search (never indexable) are outside the index of unindexed
      // rows, which a search's probe reads in seq order.
      const { rows: defs } = await sql<{
        def: string;
      }>`select indexdef as def from pg_indexes where indexname = 'transcript_entries_unindexed_idx' and schemaname = current_schema()`.execute(
        db,
      );
      expect(defs.map((d) => d.def)).toEqual([expect.stringMatching(/\(agent_id, session_id, seq\).*'\$sealed'/)]);
      expect(await sessionIdsOfKey(db, 'A', KEY)).toEqual([
        { sessionId: 'r1', startedAt: new Date(ts(0)), endedAt: new Date(ts(1)), current: false },
        { sessionId: 'r2', startedAt: new Date(ts(0)), endedAt: new Date(ts(13)), current: false },
        { sessionId: 'r3', startedAt: daysAgo(5), endedAt: null, current: true },
      ]);
      expect(
        await db.selectFrom('session_ids').select('session_id').where('session_id', '=', 'lost').execute(),
      ).toEqual([]);
    });
  });

  describe('the search index of imported entries', () => {
    const unindexed = async (agentId: string) =>
      (
        await db
          .selectFrom('transcript_entries')
          .select('id')
          .where('agent_id', '=', agentId)
          .where('search_vector', 'is', null)
          .where('search_terms', 'is', null)
          .execute()
      ).length;

    it('indexes what an import left unindexed, in warn mode too, for the named agent only, and then has nothing left to do', async () => {
      await session('A', 'agent:A:imported', 'imp', 1);
      await appendEntries(db, 'A', 'imp', [message('wombat', 1), message('quokka', 2)], { deferSearchIndex: true });
      await appendEntries(db, 'B', 'impB', [message('numbat', 1)], { deferSearchIndex: true });
      expect([await unindexed('A'), await unindexed('B')]).toEqual([2, 1]);
      const report = await runMaintenance(db, { now: NOW, mode: 'warn', agentId: 'A' });
      expect(report.entriesIndexed).toBe(2);
      expect([await unindexed('A'), await unindexed('B')]).toEqual([0, 1]);
      // The same text an insert indexes: the entry is found by its words.
      const { rows } = await sql<{
        id: string;
      }>`select id from transcript_entries where agent_id = 'A' and search_vector @@ to_tsquery('simple', 'quokka')`.execute(
        db,
      );
      expect(rows.map((r) => r.id)).toEqual(['quokka']);
      // Every agent's, when none is named; nothing on the next run.
      expect((await runMaintenance(db, { now: NOW, mode: 'warn' })).entriesIndexed).toBe(1);
      expect((await runMaintenance(db, { now: NOW, mode: 'warn' })).entriesIndexed).toBe(0);
    });
  });

  it.each([
    [{ pruneAfterDays: -1 }, 'pruneAfterDays'],
    [{ maxEntries: 1.5 }, 'maxEntries'],
    [{ mode: 'delete' }, 'mode'],
  ])('rejects %j with InvalidMaintenanceOptionsError naming the field', async (bad, field) => {
    const error = await runMaintenance(db, { now: NOW, ...(bad as object) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidMaintenanceOptionsError);
    expect((error as InvalidMaintenanceOptionsError).field).toBe(field);
  });
});
