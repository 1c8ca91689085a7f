import { CompiledQuery, sql, type Kysely, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { randomBytes } from 'node:crypto';
import { testDatabases } from '../support/databases';
import { atRestPlugin } from '../../src/security/at-rest';
import { parseKeyRing } from '../../src/security/key-ring';
import type { Store } from '../../src/store/connect';
import type { Database } from '../../src/store/schema';
import {
  appendEntries,
  appendEntriesNotingPrior,
  appendEntriesRedacted,
  countEntries,
  entriesAfter,
  getEntry,
  lastCompaction,
  loadActiveEntries,
  setTokenEstimates,
  tailEntries,
  type EntryToAppend,
} from '../../src/store/entries-repo';
import { getSession } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import { allEntries } from '../support/store-readers';
import { compactionSpans, messagesInRange, rangeAround } from '../../src/store/history-repo';
import { searchHistory } from '../../src/store/history-search';
import { backfillSearchVectors } from '../../src/store/search-backfill';

const T0 = Date.UTC(2026, 0, 1);
const ts = (i: number) => new Date(T0 + i * 1000).toISOString();
const message = (id: string, i: number, text = `message ${id}`): EntryToAppend => ({
  entry: { type: 'message', id, parentId: null, timestamp: ts(i), message: { role: 'user', content: text } },
  tokenEstimate: 5,
});
const compaction = (id: string, i: number, firstKeptEntryId: string): EntryToAppend => ({
  entry: {
    type: 'compaction',
    id,
    parentId: null,
    timestamp: ts(i),
    summary: `summary ${id}`,
    firstKeptEntryId,
    tokensBefore: 1000,
  },
  tokenEstimate: null,
});
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

describe.each(testDatabases())('entries repository on $name', (database) => {
  let store: Store;
  let db: Kysely<Database>;
  beforeEach(async () => {
    store = await database.open();
    db = store.db;
  });
  afterEach(async () => store.close());

  describe('appendEntries', () => {
    it('inserts each entry once when the same batch is appended twice, keeping append order', async () => {
      const batch = ['a', 'b', 'c'].map((id, i) => message(id, i));
      expect(await appendEntries(db, 'A', 's1', batch)).toBe(3);
      expect(await appendEntries(db, 'A', 's1', batch)).toBe(0);
      expect(await appendEntries(db, 'A', 's1', [message('b', 1), message('d', 3)])).toBe(1);
      expect(ids(await allEntries(db, 'A', 's1'))).toEqual(['a', 'b', 'c', 'd']);
    });

    it('writes a batch row for row as one-by-one appends do, search columns included, plain and sealed', async () => {
      const ring = parseKeyRing(`K:${randomBytes(32).toString('base64')}`);
      const entries: EntryToAppend[] = [
        message('u1', 0, 'where is the ledger'),
        {
          entry: {
            type: 'message',
            id: 'a1',
            parentId: 'u1',
            timestamp: ts(1),
            message: { role: 'assistant', content: [{ type: 'text', text: 'in the vault' }] },
          },
          tokenEstimate: 7,
        },
        compaction('c1', 2, 'u1'),
        {
          entry: {
            type: 'message',
            id: 'n1',
            parentId: 'c1',
            timestamp: ts(3),
            message: { role: 'user', content: 'nul \u0000 here' },
          },
          tokenEstimate: null,
        },
      ];
      for (const [name, view] of [
        ['plain', db],
        ['sealed', db.withoutPlugins().withPlugin(atRestPlugin({ ring, seal: true }))],
      ] as const) {
        for (const e of entries) await appendEntries(view, 'A', `one-${name}`, [e]);
        expect(await appendEntries(view, 'A', `batch-${name}`, entries)).toBe(entries.length);
        const columns = (sessionId: string) =>
          sql<
            Record<string, unknown>
          >`select id, parent_id, type, role, payload::text as payload, token_estimate, byte_size, created_at, search_vector::text as vector, search_terms
            from transcript_entries where agent_id = 'A' and session_id = ${sessionId} order by seq`.execute(
            db.withoutPlugins(),
          );
        const one = (await columns(`one-${name}`)).rows;
        const batch = (await columns(`batch-${name}`)).rows;
        expect(batch.map((r) => r.id)).toEqual(['u1', 'a1', 'c1', 'n1']);
        if (name === 'plain') {
          expect(batch).toEqual(one);
          expect(batch[0]!.vector).toContain("'ledger'");
        } else {
          // Sealed payloads differ per write (a fresh nonce); everything else, the blind index included, is the same.
          const unsealed = (rows: Record<string, unknown>[]) =>
            rows.map(({ payload, ...rest }) => ({ ...rest, sealed: String(payload).includes('$sealed') }));
          expect(unsealed(batch)).toEqual(unsealed(one));
          expect(batch[0]!.vector).toBeNull();
          // 'where is the ledger': stop words are not indexed, so one term.
          expect(batch[0]!.search_terms).toHaveLength(1);
          expect((await getEntry(view, 'A', `batch-${name}`, 'u1'))?.payload).toEqual(entries[0]!.entry);
        }
      }
    });

    it('stores NULL for a batch entry whose parent or estimate is missing', async () => {
      const loose = {
        entry: { ...message('p', 0).entry, parentId: undefined },
        tokenEstimate: undefined,
      } as unknown as EntryToAppend;
      expect(await appendEntries(db, 'A', 'loose', [loose, message('q', 1)])).toBe(2);
      const rows = await sql<{
        id: string;
        parent_id: string | null;
        token_estimate: number | null;
      }>`select id, parent_id, token_estimate from transcript_entries where session_id = 'loose' order by seq`.execute(
        db,
      );
      expect(rows.rows).toEqual([
        { id: 'p', parent_id: null, token_estimate: null },
        { id: 'q', parent_id: null, token_estimate: 5 },
      ]);
    });

    it('notes in the same statement whether the session had rows before the batch', async () => {
      expect(await appendEntriesNotingPrior(db, 'A', 's1', [message('a', 0), message('b', 1)])).toEqual({
        inserted: 2,
        hadEntries: false,
      });
      expect(await appendEntriesNotingPrior(db, 'A', 's1', [message('b', 1), message('c', 2)])).toEqual({
        inserted: 1,
        hadEntries: true,
      });
      // Nothing new: still says what was there.
      expect(await appendEntriesNotingPrior(db, 'A', 's1', [message('c', 2)])).toEqual({
        inserted: 0,
        hadEntries: true,
      });
      expect(await appendEntriesNotingPrior(db, 'B', 's1', [message('a', 0)])).toEqual({
        inserted: 1,
        hadEntries: false,
      });
    });
  });

  describe('appendEntriesRedacted', () => {
    const secret = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0'.repeat(2);
    it('persists secret-shaped values redacted and reports what it replaced', async () => {
      const result = await appendEntriesRedacted(db, 'A', 's1', [message('a', 0, `token ${secret}`), message('b', 1)]);
      expect(result.inserted).toBe(2);
      expect(result.redactions).toEqual([{ kind: 'github_token', count: 1 }]);
      const stored = JSON.stringify((await getEntry(db, 'A', 's1', 'a'))!.payload);
      expect(stored).not.toContain(secret);
      expect(stored).toContain('[REDACTED:github_token]');
    });
    it('stays idempotent: a retried append of the same entries inserts nothing', async () => {
      const batch = [message('a', 0, `token ${secret}`)];
      await appendEntriesRedacted(db, 'A', 's1', batch);
      expect((await appendEntriesRedacted(db, 'A', 's1', batch)).inserted).toBe(0);
    });
  });

  describe('loadActiveEntries', () => {
    it('returns the newest compaction and the entries from its firstKeptEntryId on, without compaction entries', async () => {
      await appendEntries(db, 'A', 's1', [
        message('m1', 1),
        message('m2', 2),
        compaction('c1', 3, 'm2'),
        message('m3', 4),
        message('m4', 5),
        message('m5', 6),
        compaction('c2', 7, 'm4'),
        message('m6', 8),
      ]);
      const active = await loadActiveEntries(db, 'A', 's1');
      expect(active.compaction).toMatchObject({ id: 'c2', firstKeptEntryId: 'm4' });
      expect(ids(active.rows)).toEqual(['m4', 'm5', 'm6']);
    });
    it('returns every entry when there was no compaction', async () => {
      await appendEntries(db, 'A', 's1', [message('m1', 1), message('m2', 2)]);
      const active = await loadActiveEntries(db, 'A', 's1');
      expect(active.compaction).toBeUndefined();
      expect(ids(active.rows)).toEqual(['m1', 'm2']);
    });
  });

  describe('recall reads (history_search / history_expand)', () => {
    // One case: each fresh database costs seconds; the reads share one transcript.
    it('names summarized ranges, searches this agent only (ranked) and reads ranges', async () => {
      await appendEntries(db, 'A', 's1', [
        message('m1', 1, 'the harbour light is amber'),
        message('m2', 2, 'amber amber harbour'),
        compaction('c1', 3, 'm2'),
        message('m3', 4, 'nothing here'),
        message('m4', 5, 'more'),
        compaction('c2', 6, 'm4'),
        message('m5', 7, 'the amber light again'),
      ]);
      await appendEntries(db, 'B', 's1', [message('b1', 1, 'amber of agent B')]);

      // The last compaction summarized from the previous one's first kept entry to its own.
      expect((await loadActiveEntries(db, 'A', 's1')).summarized).toEqual({
        firstEntryId: 'm2',
        lastEntryId: 'm3',
        messages: 2,
      });
      expect(await compactionSpans(db, 'A', 's1')).toEqual([
        { id: 'c1', fromSeq: 0, toSeq: expect.any(Number) },
        { id: 'c2', fromSeq: expect.any(Number), toSeq: expect.any(Number) },
      ]);

      // Any query word matches; more matches rank higher; never another agent's rows.
      const hits = await searchHistory(db, { agentId: 'A', sessionIds: ['s1'], query: 'Amber harbour', limit: 10 });
      expect(ids(hits.map((h) => h.row))).toEqual(['m2', 'm1', 'm5']);
      expect(hits[0]!.rank).toBeGreaterThan(hits[2]!.rank);
      expect(
        ids(
          (await searchHistory(db, { agentId: 'A', sessionIds: ['s1'], query: 'amber', limit: 1 })).map((h) => h.row),
        ),
      ).toHaveLength(1);
      expect(await searchHistory(db, { agentId: 'A', sessionIds: ['s1'], query: '!!!', limit: 5 })).toEqual([]);
      expect(await searchHistory(db, { agentId: 'A', sessionIds: ['other'], query: 'amber', limit: 5 })).toEqual([]);

      // Ranges around an entry, read a bounded page at a time.
      const m3 = (await getEntry(db, 'A', 's1', 'm3'))!;
      const around = await rangeAround(db, { agentId: 'A', sessionId: 's1', seq: Number(m3.seq), before: 1, after: 1 });
      expect(ids(await messagesInRange(db, { agentId: 'A', sessionId: 's1', ...around, limit: 10 }))).toEqual([
        'm2',
        'm3',
        'm4',
      ]);
      const all = await rangeAround(db, { agentId: 'A', sessionId: 's1', seq: Number(m3.seq), before: 9, after: 9 });
      expect(ids(await messagesInRange(db, { agentId: 'A', sessionId: 's1', ...all, limit: 3 }))).toEqual([
        'm1',
        'm2',
        'm3',
      ]);
    });
  });

  describe('history search migration', () => {
    it('backfills a tsvector for rows written before it, from text, tool arguments and summaries; sealed rows stay unindexed', async () => {
      const raw = db.withoutPlugins();
      const old = (id: string, seq: number, payload: unknown) =>
        sql`insert into transcript_entries (agent_id, session_id, id, seq, type, role, payload, byte_size, created_at)
            values ('A', 's1', ${id}, ${seq}, 'message', 'assistant', ${JSON.stringify(payload)}::jsonb, 1, now())`.execute(
          raw,
        );
      await old('t', 1, {
        type: 'message',
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Quokka here' },
            { type: 'toolCall', name: 'find', arguments: { q: 'wombat' } },
          ],
        },
      });
      await old('c', 2, { type: 'compaction', summary: 'Goal: numbat' });
      await old('s', 3, { $sealed: 1, k: 'K', iv: '', ct: '', tag: '' });
      await backfillSearchVectors(db);
      const { rows } = await sql<{
        id: string;
        v: string | null;
      }>`select id, search_vector::text as v from transcript_entries order by seq`.execute(raw);
      expect(rows.find((r) => r.id === 't')!.v).toEqual(expect.stringMatching(/'quokka'.*'wombat'|'wombat'.*'quokka'/));
      expect(rows.find((r) => r.id === 'c')!.v).toContain("'numbat'");
      expect(rows.find((r) => r.id === 's')!.v).toBeNull();
    });
  });

  describe('typed rows', () => {
    it("types each row's payload by its type, so a compaction reads without a cast", async () => {
      await appendEntries(db, 'A', 's1', [message('a', 0), compaction('c', 1, 'a')]);
      const row = await lastCompaction(db, 'A', 's1');
      expect(row?.payload.firstKeptEntryId).toBe('a');
      const first = await getEntry(db, 'A', 's1', 'a');
      expect(first?.type === 'message' ? first.payload.message.content : undefined).toBe('message a');
    });

    it('refuses a row whose payload is another kind than its type column, naming the entry', async () => {
      await appendEntries(db, 'A', 's1', [message('a', 0)]);
      await sql`update transcript_entries set type = 'compaction' where agent_id = 'A' and session_id = 's1' and id = 'a'`.execute(
        db,
      );
      await expect(getEntry(db, 'A', 's1', 'a')).rejects.toThrow(
        /transcript entry a: its type column says compaction but its payload's type is message/,
      );
      await expect(lastCompaction(db, 'A', 's1')).rejects.toThrow(/transcript entry a/);
    });
  });

  describe('setTokenEstimates', () => {
    it('caches estimates on the named entries only', async () => {
      await appendEntries(db, 'A', 's1', [
        { ...message('a', 0), tokenEstimate: null },
        { ...message('b', 1), tokenEstimate: null },
      ]);
      await setTokenEstimates(db, 'A', 's1', [{ id: 'a', tokens: 42 }]);
      expect((await allEntries(db, 'A', 's1')).map((r) => r.token_estimate)).toEqual([42, null]);
    });
  });

  describe('agent scoping', () => {
    // Two agents use the same session id and key; neither may see the other's rows.
    beforeEach(async () => {
      await appendEntries(db, 'A', 's1', [message('a1', 1), compaction('ac', 2, 'a1'), message('a2', 3)]);
      await appendEntries(db, 'B', 's1', [
        message('b1', 1),
        compaction('bc', 2, 'b1'),
        message('b2', 3),
        message('b3', 4),
      ]);
      await ensureSession(db, { agentId: 'A', sessionKey: 'agent:A:main', newSessionId: 's1', now: new Date(T0) });
    });
    const reads: Array<[string, (db: Kysely<Database>, agent: string) => Promise<unknown>, unknown]> = [
      ['allEntries', async (d, a) => ids(await allEntries(d, a, 's1')), ['a1', 'ac', 'a2']],
      ['tailEntries', async (d, a) => ids(await tailEntries(d, a, 's1', 10)), ['a1', 'ac', 'a2']],
      ['entriesAfter', async (d, a) => ids(await entriesAfter(d, a, 's1', 0, 10)), ['a1', 'ac', 'a2']],
      ['loadActiveEntries', async (d, a) => ids((await loadActiveEntries(d, a, 's1')).rows), ['a1', 'a2']],
      ['lastCompaction', async (d, a) => (await lastCompaction(d, a, 's1'))?.id, 'ac'],
      ['countEntries', (d, a) => countEntries(d, a, 's1'), 3],
      ['getEntry of the other agent', async (d, a) => (await getEntry(d, a, 's1', 'b1'))?.id, undefined],
      ['getSession of the other agent', async (d) => (await getSession(d, 'B', 'agent:A:main'))?.session_id, undefined],
    ];
    it.each(reads)('%s returns only the calling agent’s rows', async (_name, read, expected) => {
      expect(await read(db, 'A')).toEqual(expected);
    });
  });

  describe('bounded reads', () => {
    const SESSIONS = 20;
    const PER_SESSION = 1000;
    beforeEach(async () => {
      for (let s = 0; s < SESSIONS; s++) {
        const rows: EntryToAppend[] = [];
        for (let i = 0; i < PER_SESSION; i++) {
          rows.push(i === PER_SESSION - 50 ? compaction(`c${i}`, i, `m${i - 30}`) : message(`m${i}`, i, 'x'));
        }
        for (let k = 0; k < rows.length; k += 500) await appendEntries(db, 'A', `s${s}`, rows.slice(k, k + 500));
      }
      await store.db.executeQuery(CompiledQuery.raw('ANALYZE transcript_entries'));
    });

    /** Runs `read` through a plugin that records each query, then EXPLAINs every recorded query. */
    async function plansOf(read: (db: Kysely<Database>) => Promise<unknown>): Promise<string[]> {
      const nodes: Array<{
        node: RootOperationNode;
        queryId: Parameters<KyselyPlugin['transformQuery']>[0]['queryId'];
      }> = [];
      const recorder: KyselyPlugin = {
        transformQuery: (args) => {
          nodes.push({ node: args.node, queryId: args.queryId });
          return args.node;
        },
        transformResult: async (args) => args.result,
      };
      await read(db.withPlugin(recorder));
      const plans: string[] = [];
      for (const { node, queryId } of nodes) {
        const compiled = db.getExecutor().compileQuery(node, queryId);
        const result = await db.executeQuery<{ 'QUERY PLAN': string }>(
          CompiledQuery.raw(`EXPLAIN ${compiled.sql}`, [...compiled.parameters]),
        );
        plans.push(result.rows.map((r) => r['QUERY PLAN']).join('\n'));
      }
      return plans;
    }

    it.each([
      ['loadActiveEntries', (d: Kysely<Database>) => loadActiveEntries(d, 'A', 's7')],
      ['tailEntries', (d: Kysely<Database>) => tailEntries(d, 'A', 's7', 50)],
      ['lastCompaction', (d: Kysely<Database>) => lastCompaction(d, 'A', 's7')],
    ])('%s reads through an index, never a sequential scan of the table', async (_name, read) => {
      const plans = await plansOf(read);
      expect(plans.length).toBeGreaterThan(0);
      for (const plan of plans) {
        expect(plan).not.toMatch(/Seq Scan on transcript_entries/);
        expect(plan).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
      }
    });

    it('loadActiveEntries returns only the active window of a long session', async () => {
      const active = await loadActiveEntries(db, 'A', 's7');
      expect(active.rows).toHaveLength(80 - 1);
      expect(active.rows[0]!.id).toBe(`m${PER_SESSION - 80}`);
    });
  });
});
