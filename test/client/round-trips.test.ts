/**
 * What a send costs in calls to the Temporal server: a message nobody needs to hear admitted is one
 * Update-with-Start that comes back with the reply; with `onAdmitted` it returns at admission and
 * the reply is asked for after (the fleet's server does that work once per turn, so it counts).
 */
import { testDatabases } from '../support/databases';
import { integrationSuite } from '../support/integration';
import { freshDurableAgent } from '../support/durable-turn-helpers';
import { fakeReply } from '../../src/testing';
import type { KeelClient } from '../../src/client/keel-client';

const suite = integrationSuite();

/** Counts the client's calls of the two RPCs a send may make, until `stop`. */
function countCalls(client: KeelClient): { counts: Record<string, number>; stop(): void } {
  const service = client.temporal.workflowService as unknown as Record<string, (...args: unknown[]) => unknown>;
  const counts: Record<string, number> = { executeMultiOperation: 0, pollWorkflowExecutionUpdate: 0 };
  const originals = Object.keys(counts).map((name) => [name, service[name]!] as const);
  for (const [name, original] of originals) {
    service[name] = (...args: unknown[]) => {
      counts[name]! += 1;
      return original.apply(service, args);
    };
  }
  return { counts, stop: () => originals.forEach(([name, original]) => (service[name] = original)) };
}

describe('round trips of a send (PGlite)', () => {
  const db = suite.storePerTest(testDatabases()[0]!);

  it('a send is one Update-with-Start answered with the reply; with onAdmitted, admission and then the reply', () =>
    suite.withWorker(db.store, {}, async ({ client, fake }) => {
      const key = `agent:${freshDurableAgent()}:main`;
      fake.enqueue(fakeReply.text('first'), fakeReply.text('second'));
      const calls = countCalls(client);
      try {
        expect((await client.sendMessage(key, 'hello')).reply).toBe('first');
        expect(calls.counts).toEqual({ executeMultiOperation: 1, pollWorkflowExecutionUpdate: 0 });
        let admitted = 0;
        expect((await client.sendMessage(key, 'again', { onAdmitted: () => (admitted += 1) })).reply).toBe('second');
        expect(admitted).toBe(1);
        expect(calls.counts).toEqual({ executeMultiOperation: 2, pollWorkflowExecutionUpdate: 1 });
      } finally {
        calls.stop();
      }
      // What the model was sent is the two turns, each once.
      expect(fake.requests.map((r) => JSON.stringify(r.body.messages).includes('again'))).toEqual([false, true]);
    }));
});
