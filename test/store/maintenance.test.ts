import { sql, type Kysely } from 'kysely';
import { migrateToLatest } from '../../src/store/migrations';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import type { Database } from '../../src/store/schema';
import { appendEntries, countEntries, type EntryToAppend } from '../../src/store/entries-repo';
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

  describe('the per-agent session count', () => {
    // Agent A: four sessions updated 1..4 days ago, each compacted (summarized history before m7); B: one.
    const compacted = (sessionId: string): EntryToAppend[] => [
      header(sessionId),
      ...Array.from({ length: 10 }, (_, i) => message(`${sessionId}-m${i}`, i + 1)),
      compaction(`${sessionId}-c1`, 11, `${sessionId}-m7`),
    ];
    beforeEach(async () => {
      for (let d = 1; d <= 4; d++) await session('A', `agent:A:s${d}`, `a${d}`, d, compacted(`a${d}`));
      await session('B', 'agent:B:s1', 'b1', 9, compacted('b1'));
    });

    it("prunes each agent's least recently updated sessions beyond maxSessions, whole, in enforce mode", async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce', maxSessions: 2 });
      expect(report.sessionsPruned.map((s) => [s.reason, s.sessionKey, s.entries])).toEqual([
        ['count', 'agent:A:s4', 12],
        ['count', 'agent:A:s3', 12],
      ]);
      expect(await getSession(db, 'A', 'agent:A:s3')).toBeUndefined();
      expect(await countEntries(db, 'A', 'a4')).toBe(0);
      expect(await getSession(db, 'B', 'agent:B:s1')).toBeDefined();
    });

    it('never cuts a kept session: its summarized history stays for recall and revert', async () => {
      await runMaintenance(db, { now: NOW, mode: 'enforce', maxSessions: 2 });
      for (const id of ['a1', 'a2']) {
        expect(await countEntries(db, 'A', id)).toBe(12);
        expect((await allEntries(db, 'A', id)).map((r) => r.id)).toContain(`${id}-m0`);
      }
    });

    it('warn reports the same plan and deletes nothing; enforce hands the plan over before it deletes', async () => {
      const warned = await runMaintenance(db, { now: NOW, mode: 'warn', maxSessions: 3 });
      expect(warned.sessionsPruned.map((s) => s.sessionKey)).toEqual(['agent:A:s4']);
      expect(await countEntries(db, 'A', 'a4')).toBe(12);
      const seen: string[] = [];
      const enforced = await runMaintenance(db, { now: NOW, mode: 'enforce', maxSessions: 3 }, async (plan) => {
        // What enforce is about to delete, while it is all still there.
        seen.push(...plan.sessionsPruned.map((s) => s.sessionKey));
        expect(await countEntries(db, 'A', 'a4')).toBe(12);
      });
      expect(seen).toEqual(['agent:A:s4']);
      expect(enforced.sessionsPruned).toEqual(warned.sessionsPruned);
      expect(await countEntries(db, 'A', 'a4')).toBe(0);
    });

    it('counts a session pruned for its age once, and 0 turns the count off', async () => {
      const both = await runMaintenance(db, { now: NOW, mode: 'warn', maxSessions: 1, pruneAfterDays: 3 });
      expect(both.sessionsPruned.map((s) => [s.reason, s.sessionKey])).toEqual([
        ['age', 'agent:B:s1'],
        ['age', 'agent:A:s4'],
        ['count', 'agent:A:s3'],
        ['count', 'agent:A:s2'],
      ]);
      expect((await runMaintenance(db, { now: NOW, mode: 'warn', maxSessions: 0 })).sessionsPruned).toEqual([]);
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

    it('rotation records each id once with its span; warn reports rotated transcripts past the limit, deleting nothing', async () => {
      expect(await rotateSession(db, { agentId: 'A', sessionKey: KEY, newSessionId: 'r3', now: NOW })).toBe(false);
      expect(await sessionIdsOfKey(db, 'A', KEY)).toEqual([
        { sessionId: 'r1', startedAt: daysAgo(50), endedAt: daysAgo(40), current: false },
        { sessionId: 'r2', startedAt: daysAgo(40), endedAt: daysAgo(5), current: false },
        { sessionId: 'r3', startedAt: daysAgo(5), endedAt: null, current: true },
      ]);
      const report = await runMaintenance(db, { now: NOW, mode: 'warn' });
      expect(report.sessionsPruned).toEqual([]);
      expect(report.transcriptsPruned).toEqual([
        { agentId: 'A', sessionKey: KEY, sessionId: 'r1', endedAt: daysAgo(40), entries: 2 },
      ]);
      expect(await countEntries(db, 'A', 'r1')).toBe(2);
      expect(await countEntries(db, 'A', 'r2')).toBe(14);
    });

    it('enforce prunes old rotated transcripts whole, leaves the others; a pruned key takes every transcript and its history', async () => {
      const report = await runMaintenance(db, { now: NOW, mode: 'enforce' });
      expect(report.transcriptsPruned.map((t) => [t.sessionId, t.entries])).toEqual([['r1', 2]]);
      expect(await countEntries(db, 'A', 'r1')).toBe(0);
      // A kept transcript is never cut: its summarized history (m0..m6) stays for recall and revert.
      expect(await countEntries(db, 'A', 'r2')).toBe(14);
      expect(await countEntries(db, 'A', 'r3')).toBe(2);
      expect((await sessionIdsOfKey(db, 'A', KEY)).map((s) => s.sessionId)).toEqual(['r2', 'r3']);

      await db
        .updateTable('sessions')
        .set({ updated_at: daysAgo(31) })
        .where('agent_id', '=', 'A')
        .execute();
      const warned = await runMaintenance(db, { now: NOW, mode: 'warn' });
      expect(warned.sessionsPruned.map((s) => [s.sessionKey, s.entries])).toEqual([[KEY, 16]]);
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
    [{ maxSessions: 1.5 }, 'maxSessions'],
    [{ mode: 'delete' }, 'mode'],
  ])('rejects %j with InvalidMaintenanceOptionsError naming the field', async (bad, field) => {
    const error = await runMaintenance(db, { now: NOW, ...(bad as object) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidMaintenanceOptionsError);
    expect((error as InvalidMaintenanceOptionsError).field).toBe(field);
  });
});
