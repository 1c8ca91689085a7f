/**
 * Recall after compaction: through real turns, the model calls history_search and history_expand
 * after a manual compaction and gets back what the summary dropped (and what a rotated session id of
 * the key held), only from its own agent, on plain rows (tsvector) and on rows sealed at rest (blind index);
 * and what an import brought in, indexed by the first search.
 */
import { randomBytes } from 'node:crypto';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { integrationSuite } from '../support/integration';
import { freshSchemaUrl, memoryPglite } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import {
  endsWithToolResult,
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  realisticMessage,
} from '../support/durable-turn-helpers';
import { openStore, type Store } from '../../src/store/connect';
import { parseKeyRing } from '../../src/security/key-ring';
import { importSessions } from '../../src/transfer/import-sessions';
import { writeCorpus } from '../fixtures/generate';

const suite = integrationSuite();

const KEYS = `K:${randomBytes(32).toString('base64')}`;
const variants: Array<{ name: string; url: () => Promise<string | undefined> }> = [
  { name: 'PGlite', url: async () => undefined },
];
if (process.env.TEST_DATABASE_URL)
  variants.push({ name: 'PostgreSQL', url: () => freshSchemaUrl(process.env.TEST_DATABASE_URL!) });

const text = (r: FakeRequest) => JSON.stringify(r.body);
/** The text of the tool_result answering `toolUseId`, when the request carries it. */
function toolResult(r: FakeRequest, toolUseId: string): string | undefined {
  for (const m of r.body.messages ?? []) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content)
      if (b.type === 'tool_result' && b.tool_use_id === toolUseId) return JSON.stringify(b.content);
  }
  return undefined;
}

describe.each(variants)('history recall on $name', (variant) => {
  afterEach(() => suite.fake.respondWith(undefined));

  /**
   * A first session id plants one word and is rotated away (/new); turn 1 plants another; another agent says the same word; a manual compaction (nothing kept)
   * summarizes turn 1 without the word; turn 2's model searches for it and expands the compaction.
   */
  async function recall(store: Store, encryptAtRest: boolean) {
    const agent = freshDurableAgent();
    const other = freshDurableAgent();
    const key = `agent:${agent}:main`;
    let compactionId = '';
    const before = suite.fake.requests.length;
    suite.fake.respondWith((r) => {
      if (isSummarizerRequest(r)) return fakeReply.text('Goal: talk about foxes.');
      if (isFlushRequest(r)) return fakeReply.text('NO_REPLY');
      if (toolResult(r, 'toolu_hx')) return fakeReply.text('recalled');
      if (toolResult(r, 'toolu_hs'))
        return fakeReply.toolUse([{ id: 'toolu_hx', name: 'history_expand', input: { compactionId } }]);
      if (text(r).includes('which word was it'))
        return fakeReply.toolUse([
          { id: 'toolu_hs', name: 'history_search', input: { query: 'GLIMMERFOX ticket Periwinkle' } },
        ]);
      return fakeReply.text('noted');
    });
    const config = encryptAtRest ? { encryptionKeys: KEYS, encryptAtRest } : {};
    return suite.withWorker(store, { config }, async ({ client, fake }) => {
      await client.sendMessage(key, 'the vault colour is periwinkle');
      await client.sendMessage(key, realisticMessage('/new remember the code word glimmerfox for ticket QZX-4471'));
      await client.sendMessage(`agent:${other}:main`, 'my own secret glimmerfox is elsewhere-only');
      const compaction = await client.compact(key, { keepRecentTokens: 0 });
      expect(compaction.status).toBe('succeeded');
      compactionId = compaction.compactionId!;
      expect((await client.sendMessage(key, 'which word was it?')).reply).toBe('recalled');
      const users = await store.db
        .selectFrom('transcript_entries')
        .select(['id', 'session_id', 'payload', 'search_vector', 'search_terms'])
        .where('agent_id', '=', agent)
        .where('role', '=', 'user')
        .execute();
      const find = (word: string) => users.find((u) => JSON.stringify(u.payload).includes(word))!;
      return {
        agent,
        compactionId,
        planted: find('glimmerfox'),
        rotated: find('periwinkle'),
        requests: fake.requests.slice(before),
      };
    });
  }

  function expectRecalled(run: Awaited<ReturnType<typeof recall>>) {
    // The model saw the summary wrapper naming the compaction and its range, and the recall guidance.
    const searchCall = run.requests.find((r) => text(r).includes('which word was it') && !endsWithToolResult(r))!;
    expect(text(searchCall)).toMatch(
      new RegExp(
        `Compaction ${run.compactionId} summarized entries ${run.planted.id}…\\S+ \\(2 messages\\); use history_expand with this id`,
      ),
    );
    expect(JSON.stringify(searchCall.body.system)).toContain('use history_search');
    // history_search found the compacted entry (by a whole word in another case), named its compaction, and never the other agent's.
    const found = run.requests.map((r) => toolResult(r, 'toolu_hs')).find(Boolean)!;
    expect(found).toContain(`entry ${run.planted.id}`);
    expect(found).toContain(`summarized by compaction ${run.compactionId}`);
    expect(found).toContain('remember the code word glimmerfox for ticket QZX-4471');
    expect(found).not.toContain('elsewhere-only');
    // ...and the entry of the rotated session id, named with it.
    expect(run.rotated.session_id).not.toBe(run.planted.session_id);
    expect(found).toContain(`entry ${run.rotated.id} · session ${run.rotated.session_id}`);
    expect(found).toContain('the vault colour is periwinkle');
    // history_expand brought back the summarized entries, rendered like the summarizer's input.
    const expanded = run.requests.map((r) => toolResult(r, 'toolu_hx')).find(Boolean)!;
    expect(expanded).toContain('[User]: remember the code word glimmerfox for ticket QZX-4471');
    expect(expanded).toContain('[Assistant]: noted');
    expect(expanded).toContain('[end of range]');
  }

  it('finds and expands what a compaction summarized, only from this agent (plain rows: tsvector)', async () => {
    const url = await variant.url();
    const store = await openStore(url ? { kind: 'postgres', url, maxConnections: 5 } : memoryPglite());
    try {
      const run = await recall(store, false);
      expectRecalled(run);
      expect(run.planted.search_vector).toContain("'glimmerfox'");
      expect(run.planted.search_terms).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('finds what an import brought in: the import writes it unindexed, the first history_search indexes it', async () => {
    const url = await variant.url();
    const store = await openStore(url ? { kind: 'postgres', url, maxConnections: 5 } : memoryPglite());
    const dir = await mkdtemp(join(tmpdir(), 'keel-recall-import-'));
    try {
      const agent = freshDurableAgent();
      const corpus = await writeCorpus(dir, { sessions: 1, entriesPerSession: 30, seed: 7, agentId: agent });
      const planted = {
        type: 'message',
        id: 'planted01',
        parentId: null,
        timestamp: '2026-01-31T00:00:00.000Z',
        message: { role: 'user', content: 'the courier hint word is quokkamarble' },
      };
      await appendFile(corpus.files[0]!, `${JSON.stringify(planted)}\n`);
      const report = await importSessions({ db: store.db, agentId: agent, dir });
      expect(report.totals).toMatchObject({ imported: 1, failed: 0 });
      const unindexed = async () =>
        (
          await store.db
            .selectFrom('transcript_entries')
            .select(sql<number>`count(*)::int`.as('n'))
            .where('agent_id', '=', agent)
            .where('search_vector', 'is', null)
            .executeTakeFirstOrThrow()
        ).n;
      expect(await unindexed()).toBe(report.totals.entries);

      suite.fake.respondWith((r) => {
        if (toolResult(r, 'toolu_imp')) return fakeReply.text('found it');
        if (text(r).includes('what was the hint word'))
          return fakeReply.toolUse([{ id: 'toolu_imp', name: 'history_search', input: { query: 'quokkamarble' } }]);
        return undefined;
      });
      const found = await suite.withWorker(store, {}, async ({ client, fake }) => {
        const before = fake.requests.length;
        expect((await client.sendMessage(corpus.sessionKeys[0]!, 'what was the hint word?')).reply).toBe('found it');
        return fake.requests
          .slice(before)
          .map((r) => toolResult(r, 'toolu_imp'))
          .find(Boolean)!;
      });
      expect(found).toContain('entry planted01');
      expect(found).toContain('the courier hint word is quokkamarble');
      expect(await unindexed()).toBe(0);
      const row = await store.db
        .selectFrom('transcript_entries')
        .select('search_vector')
        .where('agent_id', '=', agent)
        .where('id', '=', 'planted01')
        .executeTakeFirstOrThrow();
      // Indexed by its stem, as every word is.
      expect(row.search_vector).toContain("'quokkamarbl'");
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('finds whole words in rows sealed at rest through their blind index', async () => {
    const url = await variant.url();
    const atRest = { atRest: { ring: parseKeyRing(KEYS), seal: true } };
    const store = await openStore(url ? { kind: 'postgres', url, maxConnections: 5 } : memoryPglite(), atRest);
    try {
      const run = await recall(store, true);
      expectRecalled(run);
      expect(run.planted.search_vector).toBeNull();
      expect(run.planted.search_terms!.length).toBeGreaterThan(5);
      const raw = await sql<{ row: string }>`select t::text as row from transcript_entries t`.execute(
        store.db.withoutPlugins(),
      );
      expect(raw.rows.map((r) => r.row).join('\n')).not.toContain('glimmerfox');
    } finally {
      await store.close();
    }
  });
});
