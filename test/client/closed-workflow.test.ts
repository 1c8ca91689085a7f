/**
 * A call that reached a closed session is told apart from other failures by the error's type and
 * gRPC status, never its wording: the errors come from a real Temporal dev server.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Client, NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import { isClosedWorkflow } from '../../src/client/closed-workflow';
import { awaitResultUpdate } from '../../src/protocol';
import { testDatabases } from '../support/databases';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { fakeReply } from '../../src/testing';

/** A gRPC error as @grpc/grpc-js gives it: a code, details and metadata. */
function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: { get: () => [] } });
}

describe('isClosedWorkflow', () => {
  it.each([
    [
      "the client's WorkflowNotFoundError",
      true,
      new WorkflowNotFoundError('workflow execution already completed', 'wf', undefined),
    ],
    ['a NOT_FOUND status an Update-with-Start rethrows as is, whatever its wording', true, grpcError(5, 'gone')],
    [
      'a NOT_FOUND status deeper in the cause chain',
      true,
      Object.assign(new Error('Workflow Update failed'), { cause: grpcError(5, 'gone') }),
    ],
    [
      'a request failure that says "not found"',
      false,
      ApplicationFailure.nonRetryable('file not found', 'KeelTurnFailed'),
    ],
    ['another status whose details say "not found"', false, grpcError(9, 'update not found')],
    ['an unknown namespace', false, new NamespaceNotFoundError('nowhere')],
    ['a plain error', false, new Error('workflow execution already completed')],
  ])('%s → closed: %s', (_name, closed, err) => {
    expect(isClosedWorkflow(err)).toBe(closed);
  });
});

const suite = integrationSuite();

describe('isClosedWorkflow on what the server answers (PGlite)', () => {
  const db = suite.storePerTest(testDatabases()[0]!);

  it('an Update to a session that closed idle is a closed workflow; a call into an unknown namespace is not', () =>
    suite.withWorker(db.store, { tuning: { idleCloseMs: 500 } }, async ({ client, fake }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      fake.enqueue(fakeReply.text('bye'), fakeReply.text('back again'));
      await client.sendMessage(key, 'hello');
      const handle = client.temporal.workflow.getHandle(client.identify(key).workflowId);
      await handle.result();
      const closed = await handle
        .executeUpdate(awaitResultUpdate, { args: [{ requestId: randomUUID() }] })
        .catch((err: unknown) => err);
      expect(isClosedWorkflow(closed)).toBe(true);

      const elsewhere = new Client({ connection: suite.env.connection, namespace: `nowhere-${randomUUID()}` });
      const unknownNamespace = await elsewhere.workflow
        .getHandle(handle.workflowId)
        .executeUpdate(awaitResultUpdate, { args: [{ requestId: randomUUID() }] })
        .catch((err: unknown) => err);
      expect(unknownNamespace).toBeInstanceOf(NamespaceNotFoundError);
      expect(isClosedWorkflow(unknownNamespace)).toBe(false);

      // The client follows a closed session into a fresh run.
      expect((await client.sendMessage(key, 'are you there?')).reply).toBe('back again');
    }));
});
