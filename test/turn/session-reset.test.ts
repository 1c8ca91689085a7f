import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { keel } from '../support/keel-cli';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { getSession, recordTurnUsage } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import type { Store } from '../../src/store/connect';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';
import { sessionIdsOfKey } from '../../src/store/session-ids-repo';

const suite = integrationSuite();

const userTexts = async (store: Store, agent: string, sessionId: string) =>
  (await allEntries(store.db, agent, sessionId))
    .map((e) => (e.payload as unknown as MessageEntry).message)
    .filter((m) => m?.role === 'user')
    .map((m) => m.content);

describe.each(testDatabases())('session reset and freshness in turns, on $name', (database) => {
  const db = suite.storePerTest(database);

  it('/new with text starts a new sessionId whose first message is the text; the old transcript stays', () =>
    suite.withWorker(db.store, { config: { resetMode: 'none' } }, async ({ client, store, fake }) => {
      const agent = `r${Math.random().toString(36).slice(2, 8)}`;
      const key = `agent:${agent}:main`;
      fake.enqueue(fakeReply.text('first'), fakeReply.text('fresh start'));
      await client.sendMessage(key, 'hello');
      const before = (await getSession(store.db, agent, key))!.session_id;
      // The row Keel creates says what kind of chat the key names.
      expect((await getSession(store.db, agent, key))!.chat_type).toBe('main');
      const reply = await client.sendMessage(key, '/new summarize the report');
      expect(reply.reply).toBe('fresh start');
      const after = (await getSession(store.db, agent, key))!;
      expect(after.session_id).not.toBe(before);
      expect(await userTexts(store, agent, after.session_id)).toEqual(['summarize the report']);
      expect(await userTexts(store, agent, before)).toEqual(['hello']);
      // The model saw only the new session.
      expect(JSON.stringify(fake.requests[fake.requests.length - 1]!.body.messages)).not.toContain('hello');

      const bare = await client.sendMessage(key, '/reset');
      expect(bare).toMatchObject({ reply: 'Started a new session.', modelCalls: 0 });
      const third = (await getSession(store.db, agent, key))!.session_id;
      expect(third).not.toBe(after.session_id);
      // Every id the key has had, in order: what maintenance and `keel export --all` reach.
      expect((await sessionIdsOfKey(store.db, agent, key)).map((s) => [s.sessionId, s.current])).toEqual([
        [before, false],
        [after.session_id, false],
        [third, true],
      ]);
    }));

  // The CLI is another process: it reads the workers' database only through a PostgreSQL server.
  (database.name === 'postgres' ? it : it.skip)(
    'keel status counts turns as keel sessions does: a reset starts again at 0',
    () =>
      suite.withWorker(db.store, { config: { resetMode: 'none' } }, async ({ client, store, fake, taskQueue }) => {
        const agent = `t${Math.random().toString(36).slice(2, 8)}`;
        const key = `agent:${agent}:main`;
        fake.enqueue(fakeReply.text('one'), fakeReply.text('two'));
        await client.sendMessage(key, 'hello');
        await client.sendMessage(key, 'again');
        expect(await client.sendMessage(key, '/reset')).toMatchObject({ modelCalls: 0 });
        const env = {
          ...suite.env.processEnv,
          KEEL_TASK_QUEUE: taskQueue,
          DATABASE_URL: store.target.kind === 'postgres' ? store.target.url : undefined,
          KEEL_HOME: await mkdtemp(join(tmpdir(), 'keel-turns-')),
        };
        const [status, sessions] = await Promise.all([
          keel(['status', key, '--json'], env),
          keel(['sessions', '--agent', agent, '--json'], env),
        ]);
        expect(status.code).toBe(0);
        expect(JSON.parse(sessions.stdout).sessions).toEqual([expect.objectContaining({ sessionKey: key, turns: 0 })]);
        expect(JSON.parse(status.stdout)).toMatchObject({ turns: 0 });
        const people = await keel(['status', key], env);
        expect(people.stderr).toContain('turns 0 · compactions');
      }),
  );

  it('expires an idle session, and heartbeats do not keep it alive', () =>
    suite.withWorker(db.store, { config: { resetMode: 'idle', idleMinutes: 30 } }, async ({ client, store, fake }) => {
      const agent = `i${Math.random().toString(36).slice(2, 8)}`;
      const key = `agent:${agent}:main`;
      fake.enqueue(fakeReply.text('one'), fakeReply.text('beat'), fakeReply.text('two'));
      await client.sendMessage(key, 'one');
      const first = (await getSession(store.db, agent, key))!;
      // 40 minutes of silence.
      await sql`update sessions set last_interaction_at = now() - interval '40 minutes', session_started_at = now() - interval '41 minutes' where agent_id = ${agent}`.execute(
        store.db,
      );
      const stale = (await getSession(store.db, agent, key))!.last_interaction_at;

      await client.sendMessage(key, 'heartbeat check', { event: 'heartbeat' });
      const afterBeat = (await getSession(store.db, agent, key))!;
      expect(afterBeat.session_id).toBe(first.session_id);
      expect(afterBeat.last_interaction_at.getTime()).toBe(stale.getTime());

      await client.sendMessage(key, 'two');
      const afterIdle = (await getSession(store.db, agent, key))!;
      expect(afterIdle.session_id).not.toBe(first.session_id);
      expect(await userTexts(store, agent, afterIdle.session_id)).toEqual(['two']);
    }));
});

describe.each(testDatabases())('session counters on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(() => store.close());

  it('never moves lastInteractionAt backwards: a turn that finishes late cannot shorten the idle window', async () => {
    const key = 'agent:c:telegram:group:g1';
    const t0 = new Date('2026-01-01T10:00:00Z');
    await ensureSession(store.db, { agentId: 'c', sessionKey: key, newSessionId: 's1', now: t0, chatType: 'group' });
    const usage = {
      agentId: 'c',
      sessionKey: key,
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      contextTokens: 2,
    };
    await recordTurnUsage(store.db, { ...usage, now: new Date('2026-01-01T10:30:00Z') });
    await recordTurnUsage(store.db, { ...usage, now: new Date('2026-01-01T10:05:00Z') });
    const row = (await getSession(store.db, 'c', key))!;
    expect(row.last_interaction_at.toISOString()).toBe('2026-01-01T10:30:00.000Z');
    expect(row.input_tokens).toBe(2);
    await recordTurnUsage(store.db, { ...usage, now: new Date('2026-01-01T11:00:00Z'), touch: false });
    expect((await getSession(store.db, 'c', key))!.last_interaction_at.toISOString()).toBe('2026-01-01T10:30:00.000Z');
  });
});
