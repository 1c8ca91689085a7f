/**
 * Requests Keel refuses are refused before anything is sent or created, with an error naming the
 * field and the limit; a compaction of a session that does not exist leaves nothing running.
 */
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowNotFoundError } from '@temporalio/client';
import { testDatabases } from '../support/databases';
import { integrationSuite } from '../support/integration';
import { admissionKinds, freshDurableAgent } from '../support/durable-turn-helpers';
import { KeelClient } from '../../src/client/keel-client';
import { KeelRequestError } from '../../src/sessions/validate-request';
import { fakeReply } from '../../src/testing';
import { FailureTypes, MAX_REQUEST_BYTES, MAX_USER_TEXT_CHARS } from '../../src/protocol';
import { getSession } from '../../src/store/sessions-repo';

const suite = integrationSuite();

describe('requests refused before anything is created (PGlite)', () => {
  const db = suite.storePerTest(testDatabases()[0]!);

  it.each([
    ['10 MB', 10 * 1024 * 1024, 'characters exceeds the limit'],
    ['3 MB', 3 * 1024 * 1024, 'characters exceeds the limit'],
    ['empty', 0, 'non-empty'],
  ])('a %s message is refused at once, naming the limit, and no session workflow starts', (_name, size, wording) =>
    suite.withWorker(db.store, {}, async ({ client, store }) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const error = await client.sendMessage(key, 'x'.repeat(size)).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(KeelRequestError);
      expect((error as KeelRequestError).field).toBe('text');
      expect((error as KeelRequestError).message).toContain(wording);
      if (size > 0) expect((error as KeelRequestError).message).toContain(String(MAX_USER_TEXT_CHARS));
      await expect(
        client.temporal.workflow.getHandle(client.identify(key).workflowId).describe(),
      ).rejects.toBeInstanceOf(WorkflowNotFoundError);
      expect(await getSession(store.db, agent, key)).toBeUndefined();
    }),
  );

  it('a message under the character limit but over the byte limit once encoded (control characters) is refused naming the byte limit', () =>
    suite.withWorker(db.store, {}, async ({ client }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      const error = await client.sendMessage(key, '\u0001'.repeat(MAX_USER_TEXT_CHARS - 1_000)).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(KeelRequestError);
      expect((error as KeelRequestError).message).toContain(`${MAX_REQUEST_BYTES} bytes`);
    }));

  it('an Update-with-Start the server refuses as a whole (FAILED_PRECONDITION) is admitted by Signal instead and answered once', () =>
    suite.withWorker(db.store, {}, async ({ client, fake }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      fake.enqueue(fakeReply.text('answered by way of the signal'));
      // What the server sent the fleet bench when its worker kept no workflow cache: the Update's
      // WorkflowNotReady inside a FAILED_PRECONDITION for the whole multi-operation.
      let refused = 0;
      const refuse = async (): Promise<never> => {
        refused += 1;
        throw Object.assign(new Error('9 FAILED_PRECONDITION: Update-with-Start could not be executed.'), {
          code: 9,
          details: 'Update-with-Start could not be executed.',
          metadata: {},
        });
      };
      // Either way of sending it (waiting for the outcome in one trip, or for acceptance only).
      client.temporal.workflow.executeUpdateWithStart = refuse;
      client.temporal.workflow.startUpdateWithStart = refuse;
      expect((await client.sendMessage(key, 'hello')).reply).toBe('answered by way of the signal');
      expect(refused).toBe(1);
      expect(await admissionKinds(client.temporal, client.identify(key).workflowId)).toEqual({
        byUpdate: 0,
        bySignal: 1,
      });
      expect(fake.requests).toHaveLength(1);
    }));

  it('compacting a session that does not exist fails as KeelUnknownSession and leaves no workflow running', () =>
    suite.withWorker(db.store, {}, async ({ client, store }) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:typo`;
      const error = await client.compact(key).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(ApplicationFailure);
      expect([(error as ApplicationFailure).type, (error as ApplicationFailure).message]).toEqual([
        FailureTypes.UnknownSession,
        expect.stringContaining('has no session'),
      ]);
      const handle = client.temporal.workflow.getHandle(client.identify(key).workflowId);
      await handle.result();
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      expect(await getSession(store.db, agent, key)).toBeUndefined();
      expect(await store.db.selectFrom('compactions').selectAll().where('agent_id', '=', agent).execute()).toEqual([]);
    }));

  it("a worker with allowedAgents fails another agent's turn naming KEEL_ALLOWED_AGENTS, writes nothing, closes its workflow, and serves its own agents", () =>
    suite.withWorker(
      db.store,
      { config: { allowedAgents: ['served'] } },
      async ({ client, store, fake, taskQueue }) => {
        const before = fake.requests.length;
        const intruder = freshDurableAgent();
        const error = await client.sendMessage(`agent:${intruder}:main`, 'let me in').then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(error).toBeInstanceOf(ApplicationFailure);
        expect((error as ApplicationFailure).type).toBe(FailureTypes.AgentNotAllowed);
        expect((error as ApplicationFailure).message).toContain(
          `agent ${intruder} is not in KEEL_ALLOWED_AGENTS (served)`,
        );
        expect(fake.requests.length).toBe(before);
        // The refused run closes instead of idling until its quiet period ends.
        const refusedRun = client.temporal.workflow.getHandle(client.identify(`agent:${intruder}:main`).workflowId);
        await refusedRun.result();
        expect((await refusedRun.describe()).status.name).toBe('COMPLETED');
        for (const table of ['sessions', 'transcript_entries', 'compactions', 'memory_notes'] as const) {
          expect(await store.db.selectFrom(table).selectAll().where('agent_id', '=', intruder).execute()).toEqual([]);
        }
        fake.enqueue(fakeReply.text('welcome'));
        expect((await client.sendMessage('agent:served:main', 'hello')).reply).toBe('welcome');

        // A client built with the same setting refuses before sending: no workflow starts.
        const limited = new KeelClient({
          connection: suite.env.connection,
          namespace: suite.env.namespace,
          taskQueue,
          allowedAgents: ['served'],
        });
        const refused = await limited.sendMessage(`agent:${intruder}:other`, 'let me in').then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(refused).toBeInstanceOf(KeelRequestError);
        expect((refused as KeelRequestError).field).toBe('KEEL_ALLOWED_AGENTS');
        await expect(
          client.temporal.workflow.getHandle(client.identify(`agent:${intruder}:other`).workflowId).describe(),
        ).rejects.toBeInstanceOf(WorkflowNotFoundError);
      },
    ));
});
