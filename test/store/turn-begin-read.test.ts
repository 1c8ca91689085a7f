/**
 * A turn's begin reads, in one statement, the session row, the window learned for the model its turns
 * call (the agent's model, or the session's override when it has one) and the transcript's last entry;
 * the same statement releases tool arguments an earlier turn abandoned, never this turn's.
 */
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { setModelOverride } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import { learnWindow } from '../../src/store/model-limits-repo';
import { readOrCreateSessionForTurn, readSessionForTurn } from '../../src/store/turn-begin-read';
import { appendReplyKeepingToolArgs, loadPendingToolArgs } from '../../src/store/pending-tool-args-repo';
import { appendEntries } from '../../src/store/entries-repo';

const NOW = new Date('2026-11-25T10:00:00.000Z');
const learn = (store: Store, model: string, contextWindow: number) =>
  learnWindow(store.db, { model, contextWindow, providerMaxTokens: null, providerMessage: null, now: NOW });
const read = (store: Store, sessionKey = 'agent:a:main', releaseToolArgsBefore = NOW.toISOString()) =>
  readSessionForTurn(store.db, { agentId: 'a', sessionKey, defaultModel: 'model-a', releaseToolArgsBefore });

describe.each(testDatabases())('the read a turn begins with, on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
    await ensureSession(store.db, { agentId: 'a', sessionKey: 'agent:a:main', newSessionId: 's1', now: NOW });
  });
  afterEach(async () => store.close());

  it("reads the agent model's learned window, then the override's once the session has one; none for an unknown session", async () => {
    expect(await read(store)).toMatchObject({
      session: { session_id: 's1' },
      learnedWindow: undefined,
      lastEntryId: undefined,
    });
    await learn(store, 'model-a', 90_000);
    await learn(store, 'model-b', 40_000);
    const found = await read(store);
    expect(found?.learnedWindow).toBe(90_000);
    // The row is the session row as getSession reads it: nothing extra in it.
    expect(Object.keys(found!.session)).not.toContain('learned_window');
    expect(Object.keys(found!.session)).not.toContain('last_entry_id');
    await setModelOverride(store.db, 'a', 'agent:a:main', 'model-b');
    expect((await read(store))?.learnedWindow).toBe(40_000);
    await setModelOverride(store.db, 'a', 'agent:a:main', 'model-c');
    expect((await read(store))?.learnedWindow).toBeUndefined();
    expect(await read(store, 'agent:a:nobody')).toBeUndefined();
  });

  it('reads the last entry of this session only, and releases abandoned tool arguments older than the turn, never its own', async () => {
    const at = NOW.toISOString();
    const entry = (id: string) => ({
      entry: {
        type: 'message' as const,
        id,
        parentId: null,
        timestamp: at,
        message: { role: 'user' as const, content: id, timestamp: NOW.getTime() },
      },
      tokenEstimate: 1,
    });
    await appendEntries(store.db, 'a', 's1', [entry('u1'), entry('u2')]);
    // Another session of the agent, with a newer entry: not this session's tail.
    await ensureSession(store.db, { agentId: 'a', sessionKey: 'agent:a:other', newSessionId: 's2', now: NOW });
    await appendEntries(store.db, 'a', 's2', [entry('x9')]);
    await appendReplyKeepingToolArgs(store.db, 'a', 's1', {
      entry: {
        type: 'message',
        id: 'a1',
        parentId: 'u2',
        timestamp: at,
        message: {
          role: 'assistant',
          content: [{ type: 'toolCall', id: 'toolu_1', name: 'deploy', arguments: { token: 'raw' } }],
          stopReason: 'toolUse',
        },
      },
      tokenEstimate: 5,
    });
    await appendReplyKeepingToolArgs(store.db, 'a', 's2', {
      entry: {
        type: 'message',
        id: 'b1',
        parentId: 'x9',
        timestamp: at,
        message: {
          role: 'assistant',
          content: [{ type: 'toolCall', id: 'toolu_2', name: 'deploy', arguments: { token: 'other' } }],
          stopReason: 'toolUse',
        },
      },
      tokenEstimate: 5,
    });
    // A retry of this turn's first step (same start time) keeps the arguments written in it.
    expect((await read(store))?.lastEntryId).toBe('a1');
    expect(await loadPendingToolArgs(store.db, 'a', 's1', 'a1', 'toolu_1')).toEqual({ token: 'raw' });
    // The next turn releases them, and only this session's.
    expect((await read(store, 'agent:a:main', '2026-11-25T10:00:00.001Z'))?.lastEntryId).toBe('a1');
    expect(await loadPendingToolArgs(store.db, 'a', 's1', 'a1', 'toolu_1')).toBeUndefined();
    expect(await loadPendingToolArgs(store.db, 'a', 's2', 'b1', 'toolu_2')).toEqual({ token: 'other' });
    // A session whose transcript is empty has no last entry; its abandoned arguments are released all the same.
    await store.db.deleteFrom('transcript_entries').where('session_id', '=', 's2').execute();
    const other = await read(store, 'agent:a:other', '2026-11-25T10:00:00.001Z');
    expect(other).toMatchObject({ session: { session_id: 's2' }, lastEntryId: undefined });
    expect(await loadPendingToolArgs(store.db, 'a', 's2', 'b1', 'toolu_2')).toBeUndefined();
  });

  it("creates a new session's row and reads it as a known one; a later first turn with another id finds that row", async () => {
    await learn(store, 'model-a', 90_000);
    const first = (newSessionId: string) =>
      readOrCreateSessionForTurn(store.db, {
        agentId: 'a',
        sessionKey: 'agent:a:fresh',
        defaultModel: 'model-a',
        releaseToolArgsBefore: NOW.toISOString(),
        create: { newSessionId, now: NOW, chatType: 'direct' },
      });
    const created = await first('s-new');
    expect(created).toEqual(await read(store, 'agent:a:fresh'));
    expect(created).toMatchObject({
      session: { session_id: 's-new', chat_type: 'direct' },
      learnedWindow: 90_000,
      lastEntryId: undefined,
    });
    // A retried or concurrent first turn carries another new id: the row that exists wins.
    expect((await first('s-other')).session.session_id).toBe('s-new');
    expect(
      await store.db
        .selectFrom('session_ids')
        .select('session_id')
        .where('session_id', 'in', ['s-new', 's-other'])
        .execute(),
    ).toEqual([{ session_id: 's-new' }]);
  });
});
