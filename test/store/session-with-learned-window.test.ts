/**
 * A turn's begin reads the session row and the window learned for the model its turns call in one
 * statement: the agent's model, or the session's override when it has one.
 */
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { ensureSession, getSessionWithLearnedWindow, setModelOverride } from '../../src/store/sessions-repo';
import { learnWindow } from '../../src/store/model-limits-repo';

const NOW = new Date('2026-11-25T10:00:00.000Z');
const learn = (store: Store, model: string, contextWindow: number) => learnWindow(store.db, { model, contextWindow, providerMaxTokens: null, providerMessage: null, now: NOW });

describe.each(testDatabases())('the session row with its learned window on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
    await ensureSession(store.db, { agentId: 'a', sessionKey: 'agent:a:main', newSessionId: 's1', now: NOW });
  });
  afterEach(async () => store.close());

  it("reads the agent model's learned window, then the override's once the session has one; none for an unknown session", async () => {
    expect(await getSessionWithLearnedWindow(store.db, 'a', 'agent:a:main', 'model-a')).toMatchObject({ session: { session_id: 's1' }, learnedWindow: undefined });
    await learn(store, 'model-a', 90_000);
    await learn(store, 'model-b', 40_000);
    const found = await getSessionWithLearnedWindow(store.db, 'a', 'agent:a:main', 'model-a');
    expect(found?.learnedWindow).toBe(90_000);
    // The row is the session row as getSession reads it: nothing extra in it.
    expect(Object.keys(found!.session)).not.toContain('learned_window');
    await setModelOverride(store.db, 'a', 'agent:a:main', 'model-b');
    expect((await getSessionWithLearnedWindow(store.db, 'a', 'agent:a:main', 'model-a'))?.learnedWindow).toBe(40_000);
    await setModelOverride(store.db, 'a', 'agent:a:main', 'model-c');
    expect((await getSessionWithLearnedWindow(store.db, 'a', 'agent:a:main', 'model-a'))?.learnedWindow).toBeUndefined();
    expect(await getSessionWithLearnedWindow(store.db, 'a', 'agent:a:nobody', 'model-a')).toBeUndefined();
  });
});
