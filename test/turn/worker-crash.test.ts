import { sharedDatabases } from '../support/shared-database';
import { fakeReply } from '../../src/testing';
import { crashSuite, storedTranscript } from '../support/crash-rig';

const suite = crashSuite();

describe.each(sharedDatabases())('a worker killed mid-turn, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);

  it('lets a new worker finish the turn after SIGKILL during the model call, each entry stored once', async () => {
    const { fake } = rig;
    // The first call hangs (the worker dies while it is in flight); the retry is answered.
    fake.enqueue(fakeReply.text('never delivered', { delayMs: 60_000 }), fakeReply.text('answered after the crash'));
    const first = await rig.startReadyWorker();

    const reply = rig.client({ modelHeartbeatTimeoutMs: 2_000 }).sendMessage(rig.sessionKey, 'survive this');
    await fake.waitForRequests(fake.requests.length + 1, 60_000);
    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');

    await rig.startReadyWorker();
    const result = await reply;
    expect(result.reply).toBe('answered after the crash');

    const { entries } = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
    expect(entries.map((e) => e.payload.message.role)).toEqual(['user', 'assistant']);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    fake.assertScriptConsumed();
  });
});
