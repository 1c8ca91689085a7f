import { testDatabases } from '../support/databases';
import { fakeReply, type FakeStep } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent, routedResponder, seedConversation } from '../support/durable-turn-helpers';
import { getSession } from '../../src/store/sessions-repo';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

const suite = integrationSuite();

/** Conversation calls answered in order from `steps`; summarizer and flush calls by the routed responder. */
function scripted(steps: FakeStep[]) {
  return routedResponder(() => {
    const next = steps.shift();
    if (!next) throw new Error('conversation script exhausted');
    return next;
  });
}

describe.each(testDatabases())('overflow recovery and NO_REPLY on $name', (database) => {
  const db = suite.storePerTest(database);

  it(
    'compacts (trigger overflow) and retries once when the model says the prompt is too long, and the turn succeeds',
    () =>
      suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        // ~30k tokens of history, more than the 20k tail a compaction keeps: there is something to summarize.
        await seedConversation(store.db, agent, key, 500);
        const steps = [fakeReply.overflow(213_462, 200_000), fakeReply.text('recovered after compaction')];
        fake.respondWith(scripted(steps));
        const result = await client.sendMessage(key, 'what did we decide?');
        expect(result.reply).toBe('recovered after compaction');
        expect(steps).toHaveLength(0);

        const compactions = await store.db
          .selectFrom('compactions')
          .selectAll()
          .where('agent_id', '=', agent)
          .execute();
        expect(compactions.map((c) => [c.trigger, c.status])).toEqual([['overflow', 'succeeded']]);
        const session = await getSession(store.db, agent, key);
        expect(session!.compaction_count).toBe(1);
        // The retried call saw the compacted context (a summary instead of the oldest seeded messages).
        const retried = JSON.stringify(fake.requests[fake.requests.length - 1]!.body.messages);
        expect(retried).not.toContain('seeded question 0:');
        expect(retried).toContain('what did we decide?');
      }),
    300_000,
  );

  it(
    'answers a second overflow in the same turn by compacting again, and keeps the user entry once',
    () =>
      suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        await seedConversation(store.db, agent, key, 500);
        const steps = [
          fakeReply.overflow(213_462, 200_000),
          fakeReply.overflow(201_003, 200_000),
          fakeReply.text('recovered after two compactions'),
        ];
        fake.respondWith(scripted(steps));
        const result = await client.sendMessage(key, 'please keep this message');
        expect(result.reply).toBe('recovered after two compactions');
        expect(result.compactions).toBe(2);
        expect(steps).toHaveLength(0);

        const session = await getSession(store.db, agent, key);
        const rows = await allEntries(store.db, agent, session!.session_id);
        const users = rows
          .filter((r) => r.type === 'message' && r.role === 'user')
          .map((r) => (r.payload as unknown as MessageEntry).message.content);
        expect(users.filter((c) => c === 'please keep this message')).toHaveLength(1);
        const compactions = await store.db
          .selectFrom('compactions')
          .selectAll()
          .where('agent_id', '=', agent)
          .execute();
        expect(compactions.map((c) => [c.trigger, c.status])).toEqual([
          ['overflow', 'succeeded'],
          ['overflow', 'succeeded'],
        ]);
        // The message the user sent is still what the model answers.
        const retried = JSON.stringify(fake.requests[fake.requests.length - 1]!.body.messages);
        expect(retried).toContain('please keep this message');
      }),
    300_000,
  );

  it('answers a whole reply of NO_REPLY (any case, any surrounding whitespace) with silent: true and an empty reply', async () => {
    const table: Array<[string, boolean]> = [
      ['NO_REPLY', true],
      ['  no_reply \n', true],
      ['\tNo_Reply', true],
      ['NO_REPLY, but here is more', false],
      ['Sure, NO_REPLY is the token', false],
    ];
    await suite.withWorker(db.store, {}, async ({ client, fake }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      for (const [text, silent] of table) {
        fake.respondWith(scripted([fakeReply.text(text)]));
        const result = await client.sendMessage(key, `anything to say about ${JSON.stringify(text)}?`);
        expect({ text, silent: result.silent, reply: result.reply }).toEqual({
          text,
          silent,
          reply: silent ? '' : text,
        });
      }
    });
  }, 120_000);
});
