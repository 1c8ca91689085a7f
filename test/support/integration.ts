/**
 * The integration-suite harness: one real Temporal dev server and one fake Anthropic server per
 * suite, a fresh database per test, an in-process worker on its own task queue per test.
 *
 * @example
 *   const suite = integrationSuite();
 *   describe.each(testDatabases())('sessions on $name', (database) => {
 *     const db = suite.storePerTest(database);
 *     it('replies', () =>
 *       suite.withWorker(db.store, {}, async ({ client, fake }) => {
 *         fake.enqueue(fakeReply.text('hi'));
 *         expect((await client.sendMessage('agent:a:main', 'hello')).reply).toBe('hi');
 *       }));
 *   });
 */
import type { KeelClient } from '../../src/client/keel-client';
import { keyRingFor, type KeelConfig } from '../../src/config/keel-config';
import { keelDataConverter } from '../../src/security/payload-codec';
import type { SessionTuning } from '../../src/protocol';
import type { ActivityDeps } from '../../src/runtime/deps';
import type { Store } from '../../src/store/connect';
import type { ToolRegistry } from '../../src/tools/registry';
import type { TestDatabase } from './databases';
import { startFakeAnthropic, type FakeAnthropic, type FakeAnthropicOptions } from '../../src/testing';
import { testDeps } from './keel-deps';
import {
  keelClient,
  runInProcessWorker,
  startTemporalTestEnv,
  uniqueTaskQueue,
  type TemporalTestEnv,
} from './temporal';

/** What `withWorker` builds the worker and its client from. */
export interface WorkerOptions {
  readonly tools?: ToolRegistry;
  /** Config over the test defaults (the fake's URL and key, no daily reset). */
  readonly config?: Partial<KeelConfig>;
  /** Deps the embedding application adds: compaction hooks, a separate summarizer model, another chat model client. */
  readonly deps?: Partial<
    Pick<ActivityDeps, 'compactionHooks' | 'compactionModel' | 'model' | 'recall' | 'contextEngines' | 'metrics'>
  >;
  /** What the client sends with each session start: tuning and the context window it names. */
  readonly tuning?: SessionTuning;
  readonly contextWindowTokens?: number;
}

/** What a test body gets: a client for the worker's task queue, the store it writes, the fake model. */
export interface WorkerContext {
  readonly client: KeelClient;
  readonly store: Store;
  readonly fake: FakeAnthropic;
  /** The worker's task queue (for workflows a test starts without the client, e.g. a compaction). */
  readonly taskQueue: string;
}

export interface IntegrationSuite {
  /** The suite's dev server (valid inside tests). */
  readonly env: TemporalTestEnv;
  /** The suite's fake model server (valid inside tests). */
  readonly fake: FakeAnthropic;
  /** A fresh store of `database` for each test; after each test the fake's script must be used up. */
  storePerTest(database: TestDatabase): { readonly store: Store };
  /** Runs `fn` with a worker on a unique task queue and a client for it, then stops the worker. */
  withWorker<T>(store: Store, options: WorkerOptions, fn: (t: WorkerContext) => Promise<T>): Promise<T>;
}

/**
 * Registers the suite's beforeAll/afterAll (server and fake model) and returns the harness. `fake`:
 * how the suite's fake model is started, e.g. the small window it enforces on every request.
 */
export function integrationSuite(options: { readonly fake?: FakeAnthropicOptions } = {}): IntegrationSuite {
  let env: TemporalTestEnv | undefined;
  let fake: FakeAnthropic | undefined;
  beforeAll(async () => {
    [env, fake] = await Promise.all([startTemporalTestEnv(), startFakeAnthropic(options.fake)]);
  });
  afterAll(async () => {
    await fake?.close();
    await env?.close();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the suite's ${what} is not started: use it inside a test`);
    return value;
  };
  const suite: IntegrationSuite = {
    get env() {
      return started(env, 'Temporal dev server');
    },
    get fake() {
      return started(fake, 'fake model server');
    },
    storePerTest(database) {
      const holder: { store: Store } = { store: undefined as unknown as Store };
      beforeEach(async () => {
        holder.store = await database.open();
      });
      afterEach(async () => {
        suite.fake.respondWith(undefined);
        suite.fake.assertScriptConsumed();
        await holder.store.close();
      });
      return holder;
    },
    async withWorker(store, options, fn) {
      const taskQueue = uniqueTaskQueue();
      const deps = { ...testDeps(store, suite.fake.url, options), ...options.deps };
      const worker = await runInProcessWorker(suite.env, taskQueue, deps);
      try {
        // Like production, the client encrypts payloads when the worker's config has keys.
        const client = keelClient(
          suite.env,
          taskQueue,
          options.tuning,
          options.contextWindowTokens,
          keelDataConverter(keyRingFor(deps.config)),
        );
        return await fn({ client, store, fake: suite.fake, taskQueue });
      } finally {
        await worker.stop();
      }
    },
  };
  return suite;
}
