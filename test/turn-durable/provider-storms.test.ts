/**
 * Provider storms: model calls retry transient errors for a time budget (not a count of attempts),
 * honouring retry-after; past the budget the turn fails naming the error that persisted, and the
 * session takes the next message.
 */
import { ApplicationFailure } from '@temporalio/common';
import { testDatabases } from '../support/databases';
import { startFakeAnthropic, fakeReply, type FakeAnthropic } from '../support/fake-anthropic';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue, type TemporalTestEnv } from '../support/temporal';
import { testDeps } from '../support/keel-deps';
import { freshDurableAgent, lastUserText } from '../support/durable-turn-helpers';
import { FailureTypes } from '../../src/protocol';
import type { Store } from '../../src/store/connect';

let env: TemporalTestEnv;
let fake: FakeAnthropic;
let store: Store;

beforeAll(async () => {
  [env, fake, store] = await Promise.all([startTemporalTestEnv(), startFakeAnthropic(), testDatabases()[0]!.open()]);
});
afterAll(async () => {
  await store?.close();
  await fake?.close();
  await env?.close();
});

describe('provider storms (PGlite)', () => {
  afterEach(() => fake.respondWith(undefined));

  it('rides out a one-minute storm of 90% 429s: every turn answered once', async () => {
    const seed = Number(process.env.STORM_SEED ?? Date.now() % 100_000);
    process.stdout.write(`storm test seed: ${seed} (STORM_SEED=${seed} to repeat)\n`);
    let state = seed;
    const random = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const stormEnds = Date.now() + 60_000;
    let refused = 0;
    fake.respondWith((request) => {
      if (Date.now() < stormEnds && random() < 0.9) {
        refused++;
        return fakeReply.rateLimited({ retryAfter: 1 });
      }
      return fakeReply.text(`re: ${lastUserText(request)}`);
    });
    const taskQueue = uniqueTaskQueue();
    const worker = await runInProcessWorker(env, taskQueue, testDeps(store, fake.url));
    try {
      const client = keelClient(env, taskQueue);
      const key = `agent:${freshDurableAgent()}:main`;
      for (let i = 0; i < 5; i++) {
        const result = await client.sendMessage(key, `storm message ${i}`);
        expect(result.reply).toBe(`re: storm message ${i}`);
      }
      expect(refused).toBeGreaterThan(8); // more than the old 8-attempt limit would have survived
    } finally {
      await worker.stop();
    }
  }, 600_000);

  it('fails a turn after the retry budget naming the provider error, and answers the next message', async () => {
    let overloaded = true;
    fake.respondWith((request) => (overloaded ? fakeReply.overloaded({ retryAfter: 1 }) : fakeReply.text(`re: ${lastUserText(request)}`)));
    const taskQueue = uniqueTaskQueue();
    const worker = await runInProcessWorker(env, taskQueue, testDeps(store, fake.url));
    try {
      const client = keelClient(env, taskQueue, { modelRetryBudgetMs: 4_000 });
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
    } finally {
      await worker.stop();
    }
  }, 300_000);

  it('notices a stream that stalls after it started (heartbeats follow stream progress) and retries the call', async () => {
    let calls = 0;
    fake.respondWith((request) => {
      calls++;
      // The first answer starts streaming, then stalls far longer than the heartbeat timeout.
      return calls === 1 ? fakeReply.text('a reply that never finishes streaming', { eventDelayMs: 30_000 }) : fakeReply.text(`re: ${lastUserText(request)}`);
    });
    const taskQueue = uniqueTaskQueue();
    const worker = await runInProcessWorker(env, taskQueue, testDeps(store, fake.url));
    try {
      const client = keelClient(env, taskQueue, { modelHeartbeatTimeoutMs: 3_000 });
      const result = await client.sendMessage(`agent:${freshDurableAgent()}:main`, 'hello');
      expect(result.reply).toBe('re: hello');
      expect(calls).toBe(2);
    } finally {
      await worker.stop();
    }
  }, 300_000);
});
