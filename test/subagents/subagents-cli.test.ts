/**
 * An operator's `keel subagents` next to running workers: list a parent's children, steer one (its
 * answer reaches the parent), kill one (the parent hears the kill).
 */
import { resolve } from 'node:path';
import { crashSuite } from '../support/crash-rig';
import { sharedDatabases } from '../support/shared-database';
import { waitUntil } from '../support/wait-until';
import { keel } from '../support/keel-cli';
import { fakeReply } from '../../src/testing';
import { isChildRequest, messageText, subagentResponder } from './subagent-script';
import { announceTexts } from './announce-texts';

const suite = crashSuite();
const TOOLS = { KEEL_TOOLS_MODULE: resolve(__dirname, 'lookup-tools-module.ts') };

describe.each(sharedDatabases())('keel subagents, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);

  it('lists, steers and kills subagents from the CLI', async () => {
    const { fake, store, agentId, sessionKey } = rig;
    const base = subagentResponder({
      cities: ['Oslo', 'Lima'],
      spawnInput: (city) => ({ task: `Look up ${city} and stay around.`, label: city, mode: 'session' }),
    });
    fake.respondWith((r) => {
      const first = messageText(r.body.messages![0]);
      // Lima's first call hangs: it is killed mid-turn.
      if (isChildRequest(r) && first.includes('Lima')) return { ...fakeReply.text('never'), delayMs: 120_000 };
      return base(r);
    });
    await rig.startReadyWorker(TOOLS);
    const client = rig.client({ modelHeartbeatTimeoutMs: 2_000 });
    await client.sendMessage(sessionKey, 'Research the cities Oslo, Lima and Pune');
    await waitUntil('Oslo to announce', async () => (await announceTexts(store, sessionKey, agentId)).length === 1);

    const env = {
      DATABASE_URL: rig.database.url,
      ...rig.temporalEnv,
      KEEL_TASK_QUEUE: rig.taskQueue,
    };
    const listed = await keel(['subagents', '--parent', sessionKey, '--json'], env);
    expect(listed.code).toBe(0);
    const runs = (
      JSON.parse(listed.stdout) as { subagents: Array<{ id: string; label: string; status: string; mode: string }> }
    ).subagents;
    expect(runs.map((r) => [r.label, r.status, r.mode]).sort()).toEqual([
      ['Lima', 'running', 'session'],
      ['Oslo', 'idle', 'session'],
    ]);
    const oslo = runs.find((r) => r.label === 'Oslo')!;
    const lima = runs.find((r) => r.label === 'Lima')!;

    // An id is only reached through its own agent: another agent's steer is refused, nothing sent.
    const foreign = await keel(['subagents', 'steer', oslo.id, 'hello', '--agent', 'intruder'], env);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain(`no subagent run ${oslo.id} for agent intruder`);
    const steered = await keel(['subagents', 'steer', oslo.id, 'steer:', 'now', 'Bergen', '--agent', agentId], env);
    expect(steered.code).toBe(0);
    expect(steered.stderr).toContain(`sent to subagent ${oslo.id}`);
    const killed = await keel(['subagents', 'kill', lima.id, '--agent', agentId, '--json'], env);
    expect(killed.code).toBe(0);
    expect(JSON.parse(killed.stdout)).toMatchObject({ id: lima.id, killed: true });

    const texts = await waitUntil('the steer answer and the kill', async () => {
      const all = await announceTexts(store, sessionKey, agentId);
      return all.length === 3 && all;
    });
    expect(texts.filter((t) => t.includes('Oslo steered: steer: now Bergen'))).toHaveLength(1);
    expect(texts.filter((t) => t.includes('"Lima"') && t.includes('was killed'))).toHaveLength(1);
    const rows = await store.db.selectFrom('subagent_runs').select(['label', 'status']).orderBy('label').execute();
    expect(rows).toEqual([
      { label: 'Lima', status: 'killed' },
      { label: 'Oslo', status: 'idle' },
    ]);
    // A second kill of an ended run says so and exits 1; an unknown id is a usage error.
    const again = await keel(['subagents', 'kill', lima.id, '--agent', agentId], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already ended (killed)');
    const unknown = await keel(['subagents', 'kill', 'no-such-run'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no subagent run no-such-run');
    // Each `keel` call is a process start (ts-node): under load the case needs more than jest's default.
  }, 300_000);
});
