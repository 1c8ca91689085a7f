import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent, lastUserText } from '../support/durable-turn-helpers';
import { waitUntil } from '../support/wait-until';
import { getSession } from '../../src/store/sessions-repo';
import { FailureTypes } from '../../src/protocol';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';
import { keelClient } from '../support/temporal';

const suite = integrationSuite();

describe.each(testDatabases())('cancelling a turn on $name', (database) => {
  const db = suite.storePerTest(database);

  it('stops the running turn and withdraws a queued one; both fail as KeelCancelled, nothing half-written, and the session goes on', () =>
    suite.withWorker(db.store, {}, async ({ client, store, fake, taskQueue }) => {
      // The first call hangs far longer than the test: only the cancel can end it.
      fake.respondWith((request) => {
        const text = lastUserText(request);
        return text === 'slow'
          ? { ...fakeReply.text('too late'), delayMs: 600_000 }
          : fakeReply.text(`reply to ${text.split('\n').at(-1)}`);
      });
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const seen = fake.requests.length;
      const slow = client.sendMessage(key, 'slow', { requestId: 'req-slow' });
      await fake.waitForRequests(seen + 1, 60_000);
      // Another client's send: it is not behind the first in a client's line, so the session queues it.
      const queued = keelClient(suite.env, taskQueue).sendMessage(key, 'queued', { requestId: 'req-queued' });
      await waitUntil('both turns admitted', async () => (await client.getStatus(key)).queuedTurns === 2, 30_000);

      await client.cancelRequest(key, 'req-queued');
      await expect(queued).rejects.toMatchObject({ type: FailureTypes.Cancelled });
      await client.cancelRequest(key, 'req-slow');
      await expect(slow).rejects.toMatchObject({ type: FailureTypes.Cancelled });

      const after = await client.sendMessage(key, 'after');
      expect(after.reply).toBe('reply to after');
      // The queued message never reached the model; the cancelled turn's message stays in the
      // transcript, marked cancelled, and the next call does not send it: cancel means cancel.
      expect(fake.requests.slice(seen).map(lastUserText)).toEqual(['slow', 'after']);
      expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).not.toContain('slow');
      const session = await getSession(store.db, agent, key);
      const messages = (await allEntries(store.db, agent, session!.session_id))
        .filter((r) => r.type === 'message')
        .map((r) => (r.payload as unknown as MessageEntry).message);
      expect(messages.map((m) => ({ role: m.role, content: m.content }))).toEqual([
        { role: 'user', content: 'slow' },
        { role: 'user', content: 'after' },
        { role: 'assistant', content: [{ type: 'text', text: 'reply to after' }] },
      ]);
      const rows = await allEntries(store.db, agent, session!.session_id);
      const slowEntry = rows.find(
        (r) => r.type === 'message' && (r.payload as unknown as MessageEntry).message.content === 'slow',
      );
      const marker = rows.find((r) => r.type === 'custom');
      expect(marker?.payload).toMatchObject({
        customType: 'keel.turn_cancelled',
        data: { firstEntryId: slowEntry!.id },
      });
    }));

  it("withdraws a send still waiting in its own client's line: the session never hears of it", () =>
    suite.withWorker(db.store, {}, async ({ client, fake }) => {
      fake.respondWith((request) => {
        const text = lastUserText(request);
        return text === 'slow'
          ? { ...fakeReply.text('slow reply'), delayMs: 1_500 }
          : fakeReply.text(`reply to ${text}`);
      });
      const key = `agent:${freshDurableAgent()}:main`;
      const seen = fake.requests.length;
      const slow = client.sendMessage(key, 'slow', { requestId: 'line-slow' });
      await fake.waitForRequests(seen + 1, 60_000);
      // Behind the first send of the same client: held in the client until the first is admitted.
      const behind = client.sendMessage(key, 'behind', { requestId: 'line-behind' });
      await client.cancelRequest(key, 'line-behind');
      await expect(behind).rejects.toMatchObject({ type: FailureTypes.Cancelled });
      expect((await slow).reply).toBe('slow reply');
      expect((await client.sendMessage(key, 'next')).reply).toBe('reply to next');
      expect(fake.requests.slice(seen).map(lastUserText)).toEqual(['slow', 'next']);
    }));
});
