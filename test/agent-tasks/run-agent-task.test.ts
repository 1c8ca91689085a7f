/**
 * `runAgentTask` on the real path, with the payload codec on: an application's workflow on its own
 * task queue (its own worker, bundled from task-workflows.ts) runs Keel sessions as child workflows
 * on the Keel worker's queue. Checked: what reached the model (each task's text, prompt mode and
 * tools), what PostgreSQL holds, the children in Temporal, a parent's cancel reaching the turn, and
 * a failed task failing once with its type.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { Client, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, ChildWorkflowFailure } from '@temporalio/common';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundle } from '@temporalio/worker';
import { ENCODED_FAILURE_CONVERTER_PATH, keelDataConverter } from '../../src/security/payload-codec';
import { parseKeyRing } from '../../src/security/key-ring';
import { FailureTypes } from '../../src/protocol';
import { sessionWorkflowId } from '../../src/sessions/session-key';
import { getSession } from '../../src/store/sessions-repo';
import { ToolRegistry } from '../../src/tools/registry';
import type { MessageEntry } from '../../src/context/types';
import type { Store } from '../../src/store/connect';
import { fakeReply, startFakeAnthropic, type FakeAnthropic, type FakeRequest } from '../../src/testing';
import { toolChoiceIsNone } from '../../src/testing/fake-request-rules';
import { testDatabases } from '../support/databases';
import { freshDurableAgent, lastUserText } from '../support/durable-turn-helpers';
import { testDeps } from '../support/keel-deps';
import { allEntries } from '../support/store-readers';
import { runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue, type TemporalTestEnv } from '../support/temporal';
import { waitUntil } from '../support/wait-until';
import type { fanOutWorkflow } from './task-workflows';

const KEY = `t:${randomBytes(32).toString('base64')}`;
const dataConverter = keelDataConverter(parseKeyRing(KEY))!;

let env: TemporalTestEnv;
let fake: FakeAnthropic;
let appBundle: WorkflowBundle;
beforeAll(async () => {
  // Both bundles carry the encoded failure converter, as workers with the codec on bundle it.
  [env, fake, appBundle] = await Promise.all([
    startTemporalTestEnv({ failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH }),
    startFakeAnthropic(),
    bundleWorkflowCode({
      workflowsPath: require.resolve('./task-workflows'),
      failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH,
      logger: new DefaultLogger('WARN'),
    }),
  ]);
});
afterAll(async () => {
  await fake?.close();
  await env?.close();
});

/** `lookup` answers `<word>: found`. */
function lookupTools(): ToolRegistry {
  return new ToolRegistry().register({
    name: 'lookup',
    description: 'Looks a word up',
    input: z.object({ word: z.string() }),
    run: async ({ word }) => `${word}: found`,
  });
}

interface Rig {
  readonly client: Client;
  readonly keelQueue: string;
  readonly appQueue: string;
  readonly store: Store;
  start(tasks: Parameters<typeof fanOutWorkflow>[0]): Promise<WorkflowHandle<typeof fanOutWorkflow>>;
}

/** A Keel worker (codec on) and the application's worker on a queue of its own, then both stop. */
async function withWorkers(store: Store, fn: (rig: Rig) => Promise<void>): Promise<void> {
  const keelQueue = uniqueTaskQueue('keel-tasks');
  const appQueue = uniqueTaskQueue('app');
  const keel = await runInProcessWorker(
    env,
    keelQueue,
    testDeps(store, fake.url, { tools: lookupTools(), config: { encryptionKeys: KEY } }),
  );
  const app = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace,
    taskQueue: appQueue,
    workflowBundle: appBundle,
    dataConverter,
  });
  const running = app.run();
  const client = new Client({ connection: env.connection, namespace: env.namespace, dataConverter });
  const start = (tasks: Parameters<typeof fanOutWorkflow>[0]) =>
    client.workflow.start<typeof fanOutWorkflow>('fanOutWorkflow', {
      taskQueue: appQueue,
      workflowId: `app-${randomBytes(4).toString('hex')}`,
      args: [tasks],
    });
  try {
    await fn({ client, keelQueue, appQueue, store, start });
  } finally {
    app.shutdown();
    await running;
    await keel.stop();
  }
}

/** The tool names a model request offered. */
const toolNames = (request: FakeRequest) => (request.body.tools ?? []).map((t) => t.name as string).sort();
/** The system prompt's text. */
const systemText = (request: FakeRequest) => JSON.stringify(request.body.system ?? '');

describe.each(testDatabases())('runAgentTask on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(async () => {
    fake.respondWith(undefined);
    fake.assertScriptConsumed();
    await store.close();
  });

  it('stops a task at its budget: the report without tools is its reply, with the stop reason', () =>
    withWorkers(store, async ({ keelQueue, start }) => {
      const agentId = freshDurableAgent();
      const seen = fake.requests.length;
      // A task that would look words up for ever: the budget ends it, and its last call may not call a tool.
      fake.respondWith((request) =>
        toolChoiceIsNone(request.body)
          ? fakeReply.text('report: two words looked up, more to go')
          : fakeReply.toolUse([
              { id: `toolu_w${request.index}`, name: 'lookup', input: { word: `w${request.index}` } },
            ]),
      );
      const [result] = await (
        await start([
          { agentId, text: 'Look up every word you can', taskQueue: keelQueue, budget: { maxModelCalls: 3 } },
        ])
      ).result();

      expect(result!.reply).toBe('report: two words looked up, more to go');
      expect(result!.stopReason).toMatchObject({
        kind: 'budget',
        limit: 'modelCalls',
        modelCalls: 3,
        maxModelCalls: 3,
      });
      expect(result!.toolCalls.map((t) => t.name)).toEqual(['lookup', 'lookup']);
      const requests = fake.requests.slice(seen);
      expect(requests.map((r) => toolChoiceIsNone(r.body))).toEqual([false, false, true]);
    }));

  it('fans three tasks out with Promise.all and gathers their replies and usage, each with its prompt mode and tools', () =>
    withWorkers(store, async ({ client, keelQueue, start }) => {
      const agentId = freshDurableAgent();
      fake.respondWith((request) => fakeReply.text(`answer to ${lastUserText(request)}`));
      const seen = fake.requests.length;
      const questions = ['keels', 'hulls', 'masts'].map((w) => `What are ${w}? ${randomBytes(3).toString('hex')}`);
      const handle = await start([
        { agentId, text: questions[0]!, taskQueue: keelQueue },
        { agentId, text: questions[1]!, taskQueue: keelQueue, promptMode: 'minimal', tools: ['lookup'] },
        { agentId, text: questions[2]!, taskQueue: keelQueue, promptMode: 'none', tools: [] },
      ]);
      const results = await handle.result();

      expect(results.map((r) => r.reply)).toEqual(questions.map((q) => `answer to ${q}`));
      for (const r of results) {
        expect(r.sessionKey).toMatch(new RegExp(`^agent:${agentId}:task-[0-9a-f-]{36}$`));
        expect(r.usage.outputTokens).toBeGreaterThan(0);
        expect(r).toMatchObject({ silent: false, modelCalls: 1, toolCalls: [] });
      }
      expect(new Set(results.map((r) => r.sessionKey)).size).toBe(3);

      // One request per task (nothing retried), each with the task's prompt mode and tools.
      const requests = fake.requests.slice(seen);
      expect(requests.map(lastUserText).sort()).toEqual([...questions].sort());
      const of = (q: string) => requests.find((r) => lastUserText(r) === q)!;
      expect(toolNames(of(questions[0]!))).toEqual(
        expect.arrayContaining(['lookup', 'memory_search', 'history_search']),
      );
      expect(systemText(of(questions[0]!))).toContain('Safety');
      expect(toolNames(of(questions[1]!))).toEqual(['lookup']);
      expect(systemText(of(questions[1]!))).not.toContain('Safety');
      expect(systemText(of(questions[1]!))).toContain('Tooling');
      expect(of(questions[2]!).body.tools ?? []).toEqual([]);
      expect(systemText(of(questions[2]!))).not.toContain('Tooling');

      // PostgreSQL holds each task's session: its question and the reply.
      for (const [i, r] of results.entries()) {
        const session = await getSession(store.db, agentId, r.sessionKey);
        const messages = (await allEntries(store.db, agentId, session!.session_id))
          .filter((e) => e.type === 'message')
          .map((e) => (e.payload as unknown as MessageEntry).message);
        expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
        expect(messages[0]!.content).toBe(questions[i]);
      }

      // In Temporal each task is a completed child of the application's workflow, on Keel's queue; its
      // payloads are sealed: the history read without the codec never shows a question.
      for (const r of results) {
        const child = await client.workflow.getHandle(sessionWorkflowId(agentId, r.sessionKey)).describe();
        expect(child).toMatchObject({
          status: { name: 'COMPLETED' },
          taskQueue: keelQueue,
          parentExecution: { workflowId: handle.workflowId },
        });
      }
      const plain = new Client({ connection: env.connection, namespace: env.namespace });
      const raw = JSON.stringify(await plain.workflow.getHandle(handle.workflowId).fetchHistory());
      for (const q of questions) expect(raw).not.toContain(q);
      expect(JSON.stringify(await client.workflow.getHandle(handle.workflowId).fetchHistory())).not.toContain(
        questions[0]!,
      );
    }));

  it('is cancelled with its parent: the turn in flight stops, the child ends cancelled, and nothing runs again', () =>
    withWorkers(store, async ({ client, keelQueue, start }) => {
      const agentId = freshDurableAgent();
      // Only the cancel can end this call.
      fake.respondWith(() => ({ ...fakeReply.text('too late'), delayMs: 600_000 }));
      const seen = fake.requests.length;
      const handle = await start([
        { agentId, sessionKey: `agent:${agentId}:research`, text: 'a long question', taskQueue: keelQueue },
      ]);
      await fake.waitForRequests(seen + 1, 60_000);
      await handle.cancel();

      const failure = await handle.result().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      const child = client.workflow.getHandle(sessionWorkflowId(agentId, `agent:${agentId}:research`));
      await waitUntil(
        'the task is cancelled',
        async () => (await child.describe()).status.name === 'CANCELLED',
        30_000,
      );
      // The one model call was the only one: no retry of the call, no second run of the task.
      expect(fake.requests.length - seen).toBe(1);
      const session = await getSession(store.db, agentId, `agent:${agentId}:research`);
      const messages = (await allEntries(store.db, agentId, session!.session_id)).filter((e) => e.type === 'message');
      expect(messages.map((e) => (e.payload as unknown as MessageEntry).message.role)).toEqual(['user']);
    }));

  it('fails once, with the failure type, when the task cannot run (a tool the agent does not have)', () =>
    withWorkers(store, async ({ keelQueue, start }) => {
      const agentId = freshDurableAgent();
      const seen = fake.requests.length;
      const handle = await start([{ agentId, text: 'use the lathe', taskQueue: keelQueue, tools: ['lathe'] }]);
      const failure = (await handle.result().catch((err: unknown) => err)) as WorkflowFailedError;
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect(failure.cause).toBeInstanceOf(ChildWorkflowFailure);
      const cause = (failure.cause as ChildWorkflowFailure).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause).toMatchObject({ type: FailureTypes.InvalidInput, nonRetryable: true });
      expect(cause!.message).toContain(
        `no tool "lathe" on the worker that took the task (task queue "${keelQueue}"); it has`,
      );
      expect(cause!.message).toContain('give each application its own KEEL_TASK_QUEUE');
      expect(fake.requests.length).toBe(seen);
    }));
});
