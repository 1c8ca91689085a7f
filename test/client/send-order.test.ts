/**
 * One client's sends to a session are stored in the order `sendMessage` was called, far past
 * Temporal's 10 in-flight Updates: a burst of 60 from one client, 4 × 15 from four clients at once
 * (each client's own order kept; their sends interleave as the server received them), and sends
 * spaced while a slow model holds each turn. Checked over the stored transcript (PostgreSQL rows),
 * and every message reached the model once.
 */
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent, lastUserText } from '../support/durable-turn-helpers';
import { keelClient } from '../support/temporal';
import { allEntries } from '../support/store-readers';
import { getSession } from '../../src/store/sessions-repo';
import type { KeelClient } from '../../src/client/keel-client';
import type { Store } from '../../src/store/connect';
import type { MessageEntry } from '../../src/context/types';
import type { TurnResult } from '../../src/protocol';

const suite = integrationSuite();

/**
 * Sends per burst: six times Temporal's 10 in-flight Updates. SEND_ORDER_SENDS (a multiple of 4)
 * sets it; the 200-send soak is in bench/README.md.
 */
const SENDS = Number(process.env.SEND_ORDER_SENDS ?? 60);
const PER_CLIENT = SENDS / 4;

/** The user messages of a session's transcript, in stored order. */
async function storedUserTexts(store: Store, agentId: string, sessionKey: string): Promise<string[]> {
  const session = await getSession(store.db, agentId, sessionKey);
  return (await allEntries(store.db, agentId, session!.session_id))
    .filter((r) => r.type === 'message' && r.role === 'user')
    .map((r) => String((r.payload as unknown as MessageEntry).message.content));
}

/** Waits for every send; a rejected one fails the test with its reason. */
async function allReplies(sends: ReadonlyArray<Promise<TurnResult>>): Promise<TurnResult[]> {
  const settled = await Promise.allSettled(sends);
  const rejected = settled.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
  expect({ rejected: rejected.length, first: rejected[0] }).toEqual({ rejected: 0, first: undefined });
  return settled.map((r) => (r as PromiseFulfilledResult<TurnResult>).value);
}

describe.each(testDatabases())('the order of one client’s sends on $name', (database) => {
  const db = suite.storePerTest(database);

  it(
    `stores ${SENDS} sends of one client in the order they were made`,
    () =>
      suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
        fake.respondWith((request) => fakeReply.text(`reply to ${lastUserText(request)}`));
        // The suite's fake serves every test: this test's requests start here.
        const before = fake.requests.length;
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const texts = Array.from({ length: SENDS }, (_, i) => `one client ${i}`);
        const replies = await allReplies(texts.map((t) => client.sendMessage(key, t)));
        replies.forEach((r, i) => expect(r.reply).toBe(`reply to ${texts[i]}`));
        expect(await storedUserTexts(store, agent, key)).toEqual(texts);
        // What the model was asked: each message once, in the same order.
        expect(fake.requests.slice(before).map(lastUserText)).toEqual(texts);
      }),
    900_000,
  );

  it(
    `keeps each of four clients’ ${PER_CLIENT} sends in its own order while they interleave`,
    () =>
      suite.withWorker(db.store, {}, async ({ store, fake, taskQueue }) => {
        fake.respondWith((request) => fakeReply.text(`reply to ${lastUserText(request)}`));
        const before = fake.requests.length;
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        // Four separate clients, each with its own line.
        const clients: KeelClient[] = Array.from({ length: 4 }, () => keelClient(suite.env, taskQueue));
        const sends: Array<Promise<TurnResult>> = [];
        for (let i = 0; i < PER_CLIENT; i++)
          clients.forEach((c, k) => sends.push(c.sendMessage(key, `client ${k} send ${i}`)));
        await allReplies(sends);
        const stored = await storedUserTexts(store, agent, key);
        expect(stored).toHaveLength(SENDS);
        expect(new Set(stored).size).toBe(SENDS);
        for (let k = 0; k < 4; k++) {
          expect(stored.filter((t) => t.startsWith(`client ${k} `))).toEqual(
            Array.from({ length: PER_CLIENT }, (_, i) => `client ${k} send ${i}`),
          );
        }
        expect(fake.requests.slice(before).map(lastUserText)).toEqual(stored);
      }),
    900_000,
  );

  it(
    'keeps sends spaced while a slow model holds each turn in the order they were made',
    () =>
      suite.withWorker(db.store, {}, async ({ client, store, fake }) => {
        fake.respondWith((request) => fakeReply.text(`reply to ${lastUserText(request)}`, { delayMs: 300 }));
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const texts = Array.from({ length: 20 }, (_, i) => `spaced ${i}`);
        const sends: Array<Promise<TurnResult>> = [];
        for (const t of texts) {
          sends.push(client.sendMessage(key, t));
          // A send lands while the one before is admitted, waiting its turn, or answering.
          await new Promise((r) => setTimeout(r, 50));
        }
        await allReplies(sends);
        expect(await storedUserTexts(store, agent, key)).toEqual(texts);
      }),
    300_000,
  );
});
