/**
 * Provider storms: model calls retry transient errors for a time budget (not a count of attempts),
 * honouring retry-after; past the budget the turn fails naming the error that persisted, and the
 * session takes the next message.
 */
import { ApplicationFailure } from '@temporalio/common';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { announcedSeed } from '../support/test-seed';
import { prng } from '../fixtures/generate';
import { freshDurableAgent, lastUserText } from '../support/durable-turn-helpers';
import { FailureTypes } from '../../src/protocol';

const suite = integrationSuite();

describe('provider storms (PGlite)', () => {
  const db = suite.storePerTest(testDatabases()[0]!);

  it(
    'rides out a one-minute storm of 90% 429s: every turn answered once',
    () =>
      suite.withWorker(db.store, {}, async ({ client, fake }) => {
        const random = prng(announcedSeed('STORM_SEED', 'storm test'));
        const stormEnds = Date.now() + 60_000;
        let refused = 0;
        fake.respondWith((request) => {
          if (Date.now() < stormEnds && random() < 0.9) {
            refused++;
            return fakeReply.rateLimited({ retryAfter: 1 });
          }
          return fakeReply.text(`re: ${lastUserText(request)}`);
        });
        const key = `agent:${freshDurableAgent()}:main`;
        for (let i = 0; i < 5; i++) {
          const result = await client.sendMessage(key, `storm message ${i}`);
          expect(result.reply).toBe(`re: storm message ${i}`);
        }
        expect(refused).toBeGreaterThan(8); // more than the old 8-attempt limit would have survived
      }),
    600_000,
  );

  it(
    'fails a turn after the retry budget naming the provider error, and answers the next message',
    () =>
      suite.withWorker(db.store, { tuning: { modelRetryBudgetMs: 4_000 } }, async ({ client, fake }) => {
        let overloaded = true;
        fake.respondWith((request) =>
          overloaded ? fakeReply.overloaded({ retryAfter: 1 }) : fakeReply.text(`re: ${lastUserText(request)}`),
        );
        const key = `agent:${freshDurableAgent()}:main`;
        const error = await client.sendMessage(key, 'in the storm').then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(error).toBeInstanceOf(ApplicationFailure);
        expect((error as ApplicationFailure).type).toBe(FailureTypes.ModelUnavailable);
        expect((error as ApplicationFailure).message).toMatch(/time budget/);
        expect((error as ApplicationFailure).message).toMatch(/Overloaded|overloaded/);
        overloaded = false;
        const next = await client.sendMessage(key, 'after the storm');
        // The failed turn's message was kept: the model sees it merged with the new one (consecutive user turns).
        expect(next.reply).toMatch(/^re: in the storm\s+after the storm$/);
      }),
    300_000,
  );

  it(
    'notices a stream that stalls after it started (the stream idle timeout) and retries the call',
    () =>
      suite.withWorker(db.store, { config: { modelIdleTimeoutMs: 3_000 } }, async ({ client, fake }) => {
        let calls = 0;
        fake.respondWith((request) => {
          calls++;
          // The first answer starts streaming, then stalls far longer than the idle timeout.
          return calls === 1
            ? fakeReply.text('a reply that never finishes streaming', { eventDelayMs: 30_000 })
            : fakeReply.text(`re: ${lastUserText(request)}`);
        });
        const result = await client.sendMessage(`agent:${freshDurableAgent()}:main`, 'hello');
        expect(result.reply).toBe('re: hello');
        expect(calls).toBe(2);
      }),
    300_000,
  );
});
