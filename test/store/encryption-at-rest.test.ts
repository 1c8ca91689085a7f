/**
 * Encryption at rest (KEEL_ENCRYPT_AT_REST): real turns through the worker with a tool call, a
 * memory flush and a compaction; then the raw tables, read with plain SQL, must not hold what was
 * said, while everything reading through Keel (the next model request, memory_search, `keel
 * export`) gets the plaintext back. With encryption off the same raw check finds every string.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { integrationSuite } from '../support/integration';
import { freshSchemaUrl } from '../support/databases';
import { keel } from '../support/keel-cli';
import { fakeReply, type FakeRequest } from '../../src/testing';
import {
  endsWithToolResult,
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  realisticMessage,
} from '../support/durable-turn-helpers';
import { atRestPlugin, type AtRestOptions } from '../../src/security/at-rest';
import { openStore, type Store, type StoreTarget } from '../../src/store/connect';
import { appendEntries, getEntry } from '../../src/store/entries-repo';
import { currentCheckpoint, newestNotes, recordMemoryFlush } from '../../src/store/memory-repo';
import { searchMemory } from '../../src/store/memory-search';
import { getSubagentRun, insertSubagentRun, updateSubagentRun } from '../../src/store/subagent-runs-repo';
import { parseKeyRing, seal, type KeyRing } from '../../src/security/key-ring';
import { ToolRegistry } from '../../src/tools/registry';
import { importSessions } from '../../src/transfer/import-sessions';
import type { Database } from '../../src/store/schema';
import type { TranscriptEntry } from '../../src/context/types';

const suite = integrationSuite();

const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
/** B is current; A is the older key rows may still be sealed with. */
const KEYS = `B:${keyB},A:${keyA}`;
const ringBA = parseKeyRing(KEYS);
const ringA = parseKeyRing(`A:${keyA}`);
const ringB = parseKeyRing(`B:${keyB}`);

/** Strings that enter each kind of stored text; none may appear in a raw table when sealing is on. */
const PLANTED = {
  user: 'plantuser7q1 where is the ledger',
  args: 'plantargs8w2',
  result: 'plantresult3e4',
  reply: 'plantreply5r6',
  summary: 'plantsummary9t0',
  note: 'plantnote2y7 the zebra ledger lives in vault',
};
const CONVERSATION_TABLES = [
  'transcript_entries',
  'compactions',
  'memory_notes',
  'memory_checkpoints',
  'pending_tool_args',
  'subagent_runs',
] as const;

/** A database in a form the CLI can open too: a PGlite folder under a KEEL_HOME, or a PostgreSQL schema. */
const variants: Array<{ name: string; databaseUrl: () => Promise<string | undefined> }> = [
  { name: 'PGlite', databaseUrl: async () => undefined },
];
if (process.env.TEST_DATABASE_URL)
  variants.push({ name: 'PostgreSQL', databaseUrl: () => freshSchemaUrl(process.env.TEST_DATABASE_URL!) });

/** Every row of the conversation tables, serialized as PostgreSQL prints it. */
async function rawText(db: Kysely<Database>): Promise<string> {
  let all = '';
  for (const table of CONVERSATION_TABLES) {
    const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(table)} t`.execute(
      db.withoutPlugins(),
    );
    all += rows.map((r) => r.row).join('\n');
  }
  return all;
}

/** A handle on the same database that seals and opens with other settings (another process's configuration). */
const viewWith = (store: Store, options: AtRestOptions): Kysely<Database> =>
  store.db.withoutPlugins().withPlugin(atRestPlugin(options));

const requestText = (r: FakeRequest) => JSON.stringify(r.body);

/** A value as Keel sealed it before values were bound to their rows: version 1, the same additional data for every row. */
function sealedVersion1(ring: KeyRing, kind: 'json' | 'text', plaintext: string): unknown {
  const s = seal(ring, Buffer.from(plaintext), Buffer.from(`keel-at-rest:${kind}`));
  const [iv, ct, tag] = [s.iv, s.ciphertext, s.tag].map((b) => b.toString('base64'));
  return kind === 'json' ? { $sealed: 1, k: s.keyId, iv, ct, tag } : `$sealed:1:${s.keyId}:${iv}:${ct}:${tag}`;
}

describe.each(variants)('encryption at rest on $name', (variant) => {
  let home: string;
  let databaseUrl: string | undefined;
  /** Where this test's database lives; only a test that runs the CLI needs PGlite in a folder. */
  const targetFor = (cli: boolean): StoreTarget =>
    databaseUrl
      ? { kind: 'postgres', url: databaseUrl, maxConnections: 5 }
      : { kind: 'pglite', dataDir: cli ? join(home, 'db') : 'memory://' };
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-at-rest-'));
    databaseUrl = await variant.databaseUrl();
  });
  afterEach(async () => {
    suite.fake.respondWith(undefined);
    await rm(home, { recursive: true, force: true });
  });

  /**
   * Turn 1 calls `lookup` with planted arguments and answers with a planted reply; a manual
   * compaction flushes a planted note and stores a planted summary; turn 2 asks memory_search for a
   * word of the note. Returns what the tool received and the raw pending-arguments row it saw.
   */
  async function converse(store: Store, agent: string, encryptAtRest: boolean) {
    const key = `agent:${agent}:main`;
    const seen: { args?: unknown; pendingRaw?: string } = {};
    const tools = new ToolRegistry().register({
      name: 'lookup',
      description: 'Looks something up',
      input: z.object({ query: z.string() }),
      run: async (input) => {
        seen.args = input;
        // The raw arguments row exists exactly while the tool runs.
        const { rows } = await sql<{ row: string }>`select t::text as row from pending_tool_args t`.execute(
          store.db.withoutPlugins(),
        );
        seen.pendingRaw = rows.map((r) => r.row).join('\n');
        // Output of a real length: the manual compaction below has something to reclaim.
        return realisticMessage(PLANTED.result);
      },
    });
    const before = suite.fake.requests.length;
    suite.fake.respondWith((r) => {
      if (isSummarizerRequest(r)) return fakeReply.text(`Goal: find the ledger. ${PLANTED.summary}`);
      if (isFlushRequest(r))
        return endsWithToolResult(r)
          ? fakeReply.text('NO_REPLY')
          : fakeReply.toolUse([{ id: 'toolu_flush', name: 'memory_write', input: { text: PLANTED.note } }]);
      const text = requestText(r);
      if (text.includes('search your notes')) {
        return endsWithToolResult(r)
          ? fakeReply.text('found it')
          : fakeReply.toolUse([{ id: 'toolu_search', name: 'memory_search', input: { query: 'Zebra' } }]);
      }
      return endsWithToolResult(r)
        ? fakeReply.text(PLANTED.reply)
        : fakeReply.toolUse([{ id: 'toolu_lookup', name: 'lookup', input: { query: PLANTED.args } }]);
    });
    const config = { encryptionKeys: KEYS, encryptAtRest };
    return suite.withWorker(store, { tools, config }, async ({ client, fake }) => {
      expect((await client.sendMessage(key, PLANTED.user)).reply).toBe(PLANTED.reply);
      const compaction = await client.compact(key, { keepRecentTokens: 0 });
      expect(compaction.status).toBe('succeeded');
      expect((await client.sendMessage(key, 'now search your notes')).reply).toBe('found it');
      return { key, seen, requests: fake.requests.slice(before), compactionId: compaction.compactionId };
    });
  }

  it('stores entries, summaries, notes and tool arguments sealed; the model, memory_search and keel export read plaintext', async () => {
    const agent = freshDurableAgent();
    const target = targetFor(true);
    let store = await openStore(target, { atRest: { ring: ringBA, seal: true } });
    let key: string;
    try {
      const run = await converse(store, agent, true);
      key = run.key;
      // The tool ran with the model's arguments, while their row held only ciphertext.
      expect(run.seen.args).toEqual({ query: PLANTED.args });
      expect(run.seen.pendingRaw).toContain('$sealed');
      expect(run.seen.pendingRaw).not.toContain(PLANTED.args);
      // The tool's result reached the model: read back from the sealed transcript.
      const afterTool = run.requests.find((r) => endsWithToolResult(r) && requestText(r).includes('toolu_lookup'))!;
      expect(requestText(afterTool)).toContain(PLANTED.result);
      expect(requestText(afterTool)).toContain(PLANTED.args);
      expect(requestText(afterTool)).toContain('plantuser7q1');
      // The summary reached the next turn; memory_search found the note by one word, any case.
      const searchAnswer = run.requests.find((r) => endsWithToolResult(r) && requestText(r).includes('toolu_search'))!;
      expect(requestText(searchAnswer)).toContain(PLANTED.summary);
      expect(requestText(searchAnswer)).toContain('plantnote2y7 the zebra ledger lives in vault');
      const memoryFlush = await store.db
        .selectFrom('compactions')
        .select('memory_flush')
        .where('id', '=', run.compactionId)
        .executeTakeFirstOrThrow();
      expect(memoryFlush.memory_flush).toBe('ran (1 notes)');

      // Nothing planted is in any conversation table; every such row is sealed, with the current key.
      const raw = await rawText(store.db);
      for (const planted of Object.values(PLANTED))
        for (const word of planted.split(' ').filter((w) => w.startsWith('plant'))) expect(raw).not.toContain(word);
      for (const word of ['ledger', 'zebra', 'vault']) expect(raw).not.toContain(word);
      // Each sealed for its own row (version 2).
      const payloads = await store.db
        .withoutPlugins()
        .selectFrom('transcript_entries')
        .select(['session_id', 'id', 'payload'])
        .where('agent_id', '=', agent)
        .execute();
      expect(payloads.length).toBeGreaterThan(5);
      for (const p of payloads) {
        expect(p.payload).toMatchObject({
          $sealed: 2,
          k: 'B',
          row: [
            'transcript_entries',
            'payload',
            [
              ['agent_id', agent],
              ['id', p.id],
              ['session_id', p.session_id],
            ],
          ],
        });
      }
      const note = await store.db
        .withoutPlugins()
        .selectFrom('memory_notes')
        .select(['text', 'text_terms'])
        .executeTakeFirstOrThrow();
      expect(note.text).toMatch(/^\$sealed:2:B:/);
      expect(note.text_terms).toHaveLength(7);
      // Through Keel: the compaction entry reads as plaintext.
      const rows = await store.db
        .selectFrom('transcript_entries')
        .select('payload')
        .where('agent_id', '=', agent)
        .where('type', '=', 'compaction')
        .execute();
      expect(rows.map((r) => (r.payload as { summary?: string }).summary)).toEqual([
        expect.stringContaining(`Goal: find the ledger. ${PLANTED.summary}`),
      ]);
    } finally {
      await store.close();
    }

    // The CLI opens the store with the configured ring: export prints plaintext; without the keys it says what to set.
    const env = {
      KEEL_HOME: home,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: undefined,
      KEEL_CONFIG: undefined,
      KEEL_ENCRYPTION_KEY_ID: undefined,
    };
    const exported = await keel(['export', key, '--agent', agent], {
      ...env,
      KEEL_ENCRYPTION_KEYS: KEYS,
      KEEL_ENCRYPT_AT_REST: 'on',
    });
    expect(exported.stderr).toContain('exported');
    expect(exported.code).toBe(0);
    for (const planted of [PLANTED.user, PLANTED.reply, PLANTED.result, PLANTED.summary])
      expect(exported.stdout).toContain(planted);
    const keyless = await keel(['export', key, '--agent', agent], {
      ...env,
      KEEL_ENCRYPTION_KEYS: undefined,
      KEEL_ENCRYPT_AT_REST: undefined,
    });
    expect(keyless.code).not.toBe(0);
    expect(keyless.stderr).toContain('encrypted at rest with key "B" but KEEL_ENCRYPTION_KEYS is not set');

    // Reopened as another process would: the same rows, still readable.
    store = await openStore(target, { atRest: { ring: ringBA, seal: true } });
    try {
      expect(
        (await searchMemory(store.db, { agentId: agent, query: 'ZEBRA vault', limit: 10 })).found.map((n) => n.text),
      ).toEqual([PLANTED.note]);
    } finally {
      await store.close();
    }
  }, 240_000);

  it('with encryption at rest off, the same conversation is in the tables as plaintext', async () => {
    const agent = freshDurableAgent();
    const store = await openStore(targetFor(false));
    try {
      const run = await converse(store, agent, false);
      expect(run.seen.pendingRaw).toContain(PLANTED.args);
      const raw = await rawText(store.db);
      for (const planted of Object.values(PLANTED)) expect(raw).toContain(planted);
    } finally {
      await store.close();
    }
  }, 240_000);

  it('binds each sealed value to its row: a value moved to another row by SQL fails to read, naming both rows; values sealed before still read', async () => {
    const store = await openStore(targetFor(false), { atRest: { ring: ringBA, seal: true } });
    try {
      const raw = store.db.withoutPlugins();
      const entry = (id: string, text: string): TranscriptEntry => ({
        type: 'message',
        id,
        parentId: null,
        timestamp: new Date().toISOString(),
        message: { role: 'user', content: text },
      });
      await appendEntries(store.db, 'm', 's', [
        { entry: entry('e1', 'the walrus speaks'), tokenEstimate: 1 },
        { entry: entry('e2', 'the heron listens'), tokenEstimate: 1 },
      ]);
      const flush = (agentId: string, flushId: string, note: string) =>
        recordMemoryFlush(store.db, {
          agentId,
          sessionKey: `agent:${agentId}:main`,
          sessionId: 's',
          flushId,
          now: new Date().toISOString(),
          cycle: 0,
          notes: [note],
        });
      await flush('m', 'f-m', 'walrus notes of m');
      await flush('other', 'f-o', 'walrus notes of other');

      // A database writer swaps the two entries' sealed payloads.
      await sql`update transcript_entries t set payload = o.payload from transcript_entries o
        where t.agent_id = 'm' and o.agent_id = 'm' and t.session_id = 's' and o.session_id = 's' and ((t.id = 'e1' and o.id = 'e2') or (t.id = 'e2' and o.id = 'e1'))`.execute(
        raw,
      );
      await expect(getEntry(store.db, 'm', 's', 'e1')).rejects.toThrow(
        'a value sealed for transcript_entries.payload of the row (agent_id m, id e2, session_id s) was read from column payload of the row (agent_id m, id e1, session_id s): it was moved between rows',
      );
      await expect(getEntry(store.db, 'm', 's', 'e2')).rejects.toThrow(
        'sealed for transcript_entries.payload of the row (agent_id m, id e1, session_id s)',
      );
      // Rewriting the row the envelope names does not help: the name is authenticated with the value.
      await sql`update transcript_entries set payload = jsonb_set(payload, '{row}', '["transcript_entries","payload",[["agent_id","m"],["id","e1"],["session_id","s"]]]') where id = 'e1'`.execute(
        raw,
      );
      await expect(getEntry(store.db, 'm', 's', 'e1')).rejects.toThrow(
        'transcript_entries.payload of the row (agent_id m, id e1, session_id s): data sealed with key "B" failed authentication',
      );

      // Another agent's note moved into this agent's: memory_search refuses it instead of showing it.
      await sql`update memory_notes set text = (select text from memory_notes where agent_id = 'other') where agent_id = 'm'`.execute(
        raw,
      );
      await expect(newestNotes(store.db, 'm', 10)).rejects.toThrow(
        'a value sealed for memory_notes.text of the row (agent_id other, id f-o:0) was read from column text of the row (agent_id m, id f-m:0)',
      );

      // Values sealed before rows were bound (version 1) still open, wherever they sit.
      const old = sealedVersion1(ringA, 'json', JSON.stringify(entry('e-old', 'the old okapi')));
      await sql`insert into transcript_entries (agent_id, session_id, id, type, role, payload, byte_size, created_at) values ('m', 's', 'e-old', 'message', 'user', ${JSON.stringify(old)}::jsonb, 1, now())`.execute(
        raw,
      );
      expect((await getEntry(store.db, 'm', 's', 'e-old'))!.payload).toMatchObject({
        id: 'e-old',
        message: { content: 'the old okapi' },
      });
      await sql`insert into memory_notes (id, agent_id, session_key, session_id, day, text, compaction_cycle, created_at) values ('n-old', 'old', 'agent:old:main', 's', '2026-01-01', ${sealedVersion1(ringA, 'text', 'an old tapir note') as string}, 0, now())`.execute(
        raw,
      );
      expect((await newestNotes(store.db, 'old', 10)).map((n) => n.text)).toEqual(['an old tapir note']);
    } finally {
      await store.close();
    }
  });

  it('reads plaintext rows next to rows sealed with the current and an older key, searches all three, and refuses altered or unopenable rows', async () => {
    const store = await openStore(targetFor(false), { atRest: { ring: ringBA, seal: true } });
    try {
      const plain = viewWith(store, { seal: false });
      const sealedWithA = viewWith(store, { ring: ringA, seal: true });
      const entry = (id: string, text: string): TranscriptEntry => ({
        type: 'message',
        id,
        parentId: null,
        timestamp: new Date().toISOString(),
        message: { role: 'user', content: text },
      });
      // Written before encryption was on, then under key A, then under B (current).
      await appendEntries(plain, 'm', 's', [{ entry: entry('e-plain', 'giraffe before'), tokenEstimate: 1 }]);
      await appendEntries(sealedWithA, 'm', 's', [{ entry: entry('e-a', 'giraffe under A'), tokenEstimate: 1 }]);
      await appendEntries(store.db, 'm', 's', [{ entry: entry('e-b', 'giraffe under B'), tokenEstimate: 1 }]);
      const flush = (db: Kysely<Database>, flushId: string, note: string) =>
        recordMemoryFlush(db, {
          agentId: 'm',
          sessionKey: 'agent:m:main',
          sessionId: 's',
          flushId,
          now: new Date().toISOString(),
          cycle: 0,
          notes: [note],
        });
      await flush(plain, 'f-plain', 'Giraffes before');
      await flush(sealedWithA, 'f-a', 'giraffe under A');
      await flush(store.db, 'f-b', 'the Giraffe under B');

      const raw = await store.db
        .withoutPlugins()
        .selectFrom('transcript_entries')
        .select(['id', 'payload'])
        .orderBy('seq')
        .execute();
      expect(raw.map((r) => (r.payload as { k?: string }).k ?? 'plain')).toEqual(['plain', 'A', 'B']);
      for (const id of ['e-plain', 'e-a', 'e-b'])
        expect((await getEntry(store.db, 'm', 's', id))!.payload).toMatchObject({ id, message: { role: 'user' } });
      expect(
        ((await getEntry(store.db, 'm', 's', 'e-a'))!.payload as { message: { content: string } }).message.content,
      ).toBe('giraffe under A');

      // memory_search opens sealed notes in the worker and ranks them as plain ones: by stem, any case, under either key.
      const memory = async (query: string) =>
        (await searchMemory(store.db, { agentId: 'm', query, limit: 10 })).found.map((n) => n.text);
      expect((await memory('GIRAFFE')).sort()).toEqual(['Giraffes before', 'giraffe under A', 'the Giraffe under B']);
      expect((await memory('giraffes')).sort()).toEqual(['Giraffes before', 'giraffe under A', 'the Giraffe under B']);
      expect((await memory('giraffe under b'))[0]).toBe('the Giraffe under B');
      expect(await memory('zebra')).toEqual([]);

      // The flush's checkpoint too.
      await recordMemoryFlush(store.db, {
        agentId: 'm',
        sessionKey: 'agent:m:main',
        sessionId: 's',
        flushId: 'f-cp',
        now: new Date().toISOString(),
        cycle: 0,
        notes: [],
        checkpoint: { currentTask: 'feed the tapir', nextSteps: ['brush the tapir'] },
      });
      expect(
        await currentCheckpoint(store.db, {
          agentId: 'm',
          sessionKey: 'agent:m:main',
          sessionId: 's',
          compactionCount: 1,
        }),
      ).toEqual({ currentTask: 'feed the tapir', nextSteps: ['brush the tapir'] });
      expect(await rawText(store.db)).not.toContain('tapir');

      // A subagent's task and result are sealed like the transcript.
      const now = new Date().toISOString();
      await insertSubagentRun(store.db, {
        id: 'sub1',
        agent_id: 'm',
        parent_session_key: 'agent:m:main',
        child_session_key: 'agent:m:subagent:1',
        mode: 'run',
        depth: 1,
        status: 'running',
        task: 'count the okapis',
        result: null,
        workflow_id: null,
        created_at: now,
      });
      await updateSubagentRun(
        store.db,
        { agent_id: 'm', id: 'sub1' },
        { status: 'done', result: 'seven okapis', updated_at: now },
      );
      expect(await getSubagentRun(store.db, 'm', 'sub1')).toMatchObject({
        task: 'count the okapis',
        result: 'seven okapis',
        status: 'done',
      });
      expect(await rawText(store.db)).not.toContain('okapi');

      // Imported transcripts take the same write path.
      await writeFile(
        join(home, 'sessions.json'),
        JSON.stringify({ 'agent:imp:main': { sessionId: 'imp1', updatedAt: 1 } }),
      );
      const lines = [
        { type: 'session', id: 'imp1', version: 3, timestamp: now, cwd: '/tmp' },
        {
          type: 'message',
          id: 'i1',
          parentId: null,
          timestamp: now,
          message: { role: 'user', content: 'the narwhal line' },
        },
      ];
      await writeFile(join(home, 'imp1.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      expect((await importSessions({ db: store.db, agentId: 'imp', dir: home })).totals).toMatchObject({ failed: 0 });
      expect((await getEntry(store.db, 'imp', 'imp1', 'i1'))!.payload).toMatchObject({
        message: { content: 'the narwhal line' },
      });
      expect(await rawText(store.db)).not.toContain('narwhal');

      // An altered ciphertext fails authentication, naming the key.
      await sql`update transcript_entries set payload = jsonb_set(payload, '{ct}', to_jsonb('AAAA' || substr(payload->>'ct', 5))) where id = 'e-b'`.execute(
        store.db,
      );
      await expect(getEntry(store.db, 'm', 's', 'e-b')).rejects.toThrow(
        'data sealed with key "B" failed authentication: it was altered',
      );
      // A ring without the older key, and a store without any ring, say what to set.
      await expect(getEntry(viewWith(store, { ring: ringB, seal: true }), 'm', 's', 'e-a')).rejects.toThrow(
        'sealed with key "A", which KEEL_ENCRYPTION_KEYS no longer holds',
      );
      await expect(getEntry(plain, 'm', 's', 'e-a')).rejects.toThrow(
        'encrypted at rest with key "A" but KEEL_ENCRYPTION_KEYS is not set',
      );
      expect((await getEntry(plain, 'm', 's', 'e-plain'))!.payload).toMatchObject({ id: 'e-plain' });
    } finally {
      await store.close();
    }
  });
});
