/**
 * The database goes away while the model is answering, so the reply cannot be written, and stays
 * away for a while: the model call's activity waits for it (inside its attempt, or by retrying).
 * The reply it received is held in its heartbeat details (encrypted with the payload codec) and
 * stored once the database is back: every turn is answered once and the model is called once per
 * turn, however long the outage.
 * PostgreSQL only: the worker reaches it through a TCP proxy the test cuts.
 */
import { randomBytes } from 'node:crypto';
import { describeOnPostgres } from '../support/postgres-only';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent, lastUserText } from '../support/durable-turn-helpers';
import { cuttablePostgresPerTest } from '../support/postgres-behind-proxy';
import { waitUntil } from '../support/wait-until';
import { getSession } from '../../src/store/sessions-repo';
import { ENCRYPTED_ENCODING } from '../../src/security/payload-codec';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

const url = process.env.TEST_DATABASE_URL;
const suite = integrationSuite();
const TURNS = 20;
/** The turns whose model call the outage starts in, and how long the database stays away (the 60 s, and two short ones). */
const OUTAGES = new Map([
  ['turn 4', 60_000],
  ['turn 11', 5_000],
  ['turn 17', 5_000],
]);
const KEYS = `k1:${randomBytes(32).toString('base64')}`;

describeOnPostgres(
  'PostgreSQL away while the model answers, during 20 turns',
  'the worker reaches the server through a TCP proxy the test cuts',
  () => {
    const openBehindProxy = cuttablePostgresPerTest(url!);

    it('stores the reply it received once the database is back: one model call per turn, every turn answered once', async () => {
      const { proxy, store } = await openBehindProxy();
      try {
        await suite.withWorker(store, { config: { encryptionKeys: KEYS } }, async ({ client, fake }) => {
          const calls = new Map<string, number>();
          const timers: NodeJS.Timeout[] = [];
          fake.respondWith((request) => {
            const text = lastUserText(request);
            calls.set(text, (calls.get(text) ?? 0) + 1);
            // The database goes away while the model "thinks": the reply arrives, its write cannot land.
            const outage = calls.get(text) === 1 ? OUTAGES.get(text) : undefined;
            if (outage !== undefined) {
              proxy.cut();
              timers.push(setTimeout(() => proxy.restore(), outage));
            }
            return fakeReply.text(`re: ${text}`);
          });
          const agent = freshDurableAgent();
          const key = `agent:${agent}:main`;
          const handle = client.temporal.workflow.getHandle(client.identify(key).workflowId);
          const replies: string[] = [];
          try {
            for (let i = 1; i <= TURNS; i++) {
              const pending = client.sendMessage(key, `turn ${i}`);
              // Awaited below; a failed check in between must not leave its rejection unhandled.
              pending.catch(() => undefined);
              if (i === 4) {
                // During the long outage: the model call waits for the database inside its attempt, holding
                // the reply it got in its heartbeat details, sealed by the codec.
                const held = await waitUntil(
                  'a model call waiting out the outage, holding its reply',
                  async () => {
                    const activity = (await handle.describe()).raw.pendingActivities?.find(
                      (a) => (a.heartbeatDetails?.payloads?.length ?? 0) > 0,
                    );
                    return activity ?? undefined;
                  },
                  50_000,
                );
                const payload = held.heartbeatDetails!.payloads![0]!;
                expect(Buffer.from(payload.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
                expect(Buffer.from(payload.data!).toString('latin1')).not.toContain('re: turn 4');
              }
              replies.push((await pending).reply);
            }
          } finally {
            timers.forEach(clearTimeout);
            proxy.restore();
          }

          expect(replies).toEqual(Array.from({ length: TURNS }, (_, i) => `re: turn ${i + 1}`));
          // Keel tried the database while it was away, and the model was called once per turn.
          expect(proxy.refused).toBeGreaterThan(0);
          expect(Object.fromEntries(calls)).toEqual(
            Object.fromEntries(Array.from({ length: TURNS }, (_, i) => [`turn ${i + 1}`, 1])),
          );
          const session = await getSession(store.db, agent, key);
          const messages = (await allEntries(store.db, agent, session!.session_id))
            .filter((r) => r.type === 'message')
            .map((r) => (r.payload as unknown as MessageEntry).message);
          expect(messages).toHaveLength(2 * TURNS);
          expect(messages.filter((m) => m.role === 'assistant')).toHaveLength(TURNS);
        });
      } finally {
        await store.close();
      }
    }, 600_000);
  },
);
