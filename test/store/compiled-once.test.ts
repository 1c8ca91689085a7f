/**
 * Statements compiled once: each run binds its own values where the first compile put them, and a
 * statement whose values do not reach kysely as parameters is refused instead of run wrong.
 */
import { sql, type KyselyPlugin } from 'kysely';
import { StatementCounter } from '../support/statement-counter';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { compiledOnce } from '../../src/store/compiled-once';
import { ensureSession } from '../support/ensure-session';

const NOW = new Date('2026-11-26T10:00:00.000Z');

describe.each(testDatabases())('a statement compiled once, on $name', (database) => {
  let store: Store;
  beforeAll(async () => {
    store = await database.open();
    for (const [key, id] of [
      ['agent:a:one', 's1'],
      ['agent:a:two', 's2'],
      ['agent:b:one', 's3'],
    ] as const) {
      await ensureSession(store.db, { agentId: key.split(':')[1]!, sessionKey: key, newSessionId: id, now: NOW });
    }
  });
  afterAll(() => store.close());

  it('binds each run its own values, a value used twice in both places, and keeps constants', async () => {
    const sessions = compiledOnce('sessions of an agent', (db, v: { agentId: string; label: string; after: Date }) =>
      db
        .selectFrom('sessions')
        .select(['session_key', 'session_id'])
        .select(sql<string>`${v.label} || ':' || ${v.agentId}`.as('tag'))
        .where('agent_id', '=', v.agentId)
        .where('session_started_at', '>=', v.after)
        .orderBy('session_key')
        .limit(5),
    );
    expect(await sessions(store.db, { agentId: 'a', label: 'x', after: new Date(NOW.getTime() - 1000) })).toEqual([
      { session_key: 'agent:a:one', session_id: 's1', tag: 'x:a' },
      { session_key: 'agent:a:two', session_id: 's2', tag: 'x:a' },
    ]);
    expect(await sessions(store.db, { agentId: 'b', label: 'y', after: new Date(NOW.getTime() - 1000) })).toEqual([
      { session_key: 'agent:b:one', session_id: 's3', tag: 'y:b' },
    ]);
    expect(await sessions(store.db, { agentId: 'a', label: 'z', after: new Date(NOW.getTime() + 1000) })).toEqual([]);
  });

  it('refuses a value computed with, written into the SQL, or never used', async () => {
    const computed = compiledOnce('computed', (db, v: { agentId: string }) =>
      db.selectFrom('sessions').select('session_id').where('agent_id', '=', `${v.agentId}-x`),
    );
    await expect(computed(store.db, { agentId: 'a' })).rejects.toThrow(
      'statement computed: a value was changed before it reached kysely',
    );
    const inlined = compiledOnce('inlined', (db, v: { agentId: string }) =>
      db.selectFrom('sessions').select('session_id').where('agent_id', '=', sql.lit(v.agentId)),
    );
    await expect(inlined(store.db, { agentId: 'a' })).rejects.toThrow(
      'statement inlined: a value was written into its SQL',
    );
    const unused = compiledOnce('unused', (db, _v: { agentId: string; sessionKey: string }) =>
      db.selectFrom('sessions').select('session_id').where('agent_id', '=', _v.agentId),
    );
    await expect(unused(store.db, { agentId: 'a', sessionKey: 'k' })).rejects.toThrow(
      'statement unused: sessionKey never reached the statement as a parameter',
    );
  });

  it("runs past the handle's plugins as a built statement would, and refuses one that rewrites statements", async () => {
    const counter = new StatementCounter();
    const sessions = compiledOnce('counted', (db, v: { agentId: string }) =>
      db.selectFrom('sessions').select('session_id').where('agent_id', '=', v.agentId),
    );
    const counted = store.db.withPlugin(counter);
    await sessions(counted, { agentId: 'a' });
    await sessions(counted, { agentId: 'b' });
    expect(counter.count('select sessions')).toBe(2);
    const rewriting: KyselyPlugin = {
      transformQuery: (args) => ({ ...args.node }),
      transformResult: async (args) => args.result,
    };
    await expect(sessions(store.db.withPlugin(rewriting), { agentId: 'a' })).rejects.toThrow(
      'rewrites statements; a statement compiled once cannot carry it',
    );
  });
});
