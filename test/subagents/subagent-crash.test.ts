/**
 * Workers die while subagents work: SIGKILL while every child is mid-turn (its model call in
 * flight), then again once the first result has reached the parent. Each child's result still lands
 * in the parent's transcript exactly once (checked over the whole transcript), and the parent answers.
 */
import { resolve } from 'node:path';
import { crashSuite, storedTranscript, entryText } from '../support/crash-rig';
import { sharedDatabases } from '../support/shared-database';
import { waitUntil } from '../support/wait-until';
import { CITIES, PARENT_PROMPT, isChildRequest, subagentResponder } from './subagent-script';
import { announceTexts } from './announce-texts';

const suite = crashSuite();
const TOOLS = { KEEL_TOOLS_MODULE: resolve(__dirname, 'lookup-tools-module.ts') };

describe.each(sharedDatabases())('subagents while workers are SIGKILLed, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);

  it('every announce arrives exactly once when the worker dies mid-child-turn and again mid-announce', async () => {
    const { fake, store, agentId, sessionKey } = rig;
    // The children's final replies take a while: long enough to be killed in the middle of them.
    fake.respondWith(subagentResponder({ childReplyDelayMs: (city) => (city === 'Oslo' ? 1_000 : 4_000) }));
    const first = await rig.startReadyWorker(TOOLS);
    const client = rig.client({ modelHeartbeatTimeoutMs: 2_000, toolHeartbeatTimeoutMs: 2_000 });
    expect((await client.sendMessage(sessionKey, PARENT_PROMPT)).reply).toBe('Waiting for my subagents.');

    await waitUntil(
      'every child at its final model call',
      async () =>
        new Set(
          fake.requests
            .filter((r) => isChildRequest(r) && r.body.messages!.length === 3)
            .map((r) => JSON.stringify(r.body.messages![0])),
        ).size === 3,
    );
    await first.kill('SIGKILL');
    const second = await rig.startReadyWorker(TOOLS);
    await waitUntil(
      'the first announce in the parent',
      async () => (await announceTexts(store, sessionKey, agentId)).length >= 1,
    );
    await second.kill('SIGKILL');
    await rig.startReadyWorker(TOOLS);

    await waitUntil(
      'three announces',
      async () => (await announceTexts(store, sessionKey, agentId)).length >= 3,
      120_000,
    );
    await waitUntil(
      'the parent to answer each',
      async () => {
        const status = await client.getStatus(sessionKey);
        return status.turnsCompleted === 4 && status.queuedTurns === 0;
      },
      120_000,
    );

    // The list-append check: the parent's whole transcript, each child's result once, no entry twice.
    const { entries } = await storedTranscript(store, agentId, sessionKey);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    const announces = entries.filter((e) => e.role === 'user' && entryText(e).startsWith('[Subagent'));
    expect(announces).toHaveLength(3);
    for (const city of CITIES) expect(announces.filter((e) => entryText(e).includes(`"${city}"`))).toHaveLength(1);
    const runs = await store.db.selectFrom('subagent_runs').selectAll().execute();
    expect(runs.map((r) => r.status)).toEqual(['done', 'done', 'done']);
    expect(await store.db.selectFrom('subagent_announces').selectAll().execute()).toHaveLength(3);
  });
});
