import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedDatabases } from '../support/shared-database';
import { fakeReply } from '../../src/testing';
import { CRASH_TOOLS_MODULE, crashSuite, entryText, storedTranscript } from '../support/crash-rig';
import { SIDE_EFFECT_TOOL, readLog, sideEffectFiles, waitForLines } from '../support/crash-tools';

const suite = crashSuite();

describe.each(sharedDatabases())('a worker SIGKILLed during a tool activity, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);
  let sideEffects: string;

  beforeEach(() => {
    sideEffects = mkdtempSync(join(tmpdir(), 'keel-side-effects-'));
  });
  afterEach(() => {
    rmSync(sideEffects, { recursive: true, force: true });
  });

  it('retries the tool with the same idempotency key, performs the side effect once, and stores each entry once', async () => {
    const { fake } = rig;
    fake.enqueue(
      fakeReply.toolUse([{ id: 'toolu_crash_1', name: SIDE_EFFECT_TOOL, input: { note: 'ship build 42' } }]),
      fakeReply.text('the build shipped once'),
    );
    const workerEnv = { KEEL_TOOLS_MODULE: CRASH_TOOLS_MODULE, KEEL_TEST_SIDE_EFFECTS: sideEffects };
    const files = sideEffectFiles(sideEffects);
    const first = await rig.startReadyWorker(workerEnv);

    const client = rig.client({ toolHeartbeatTimeoutMs: 2_000, modelHeartbeatTimeoutMs: 2_000 });
    const reply = client.sendMessage(rig.sessionKey, 'ship build 42, once');
    // The side effect is done and the tool is still running (its result is not stored): kill now.
    await waitForLines(files.attempts, 1);
    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');

    await rig.startReadyWorker(workerEnv);
    const result = await reply;
    expect(result.reply).toBe('the build shipped once');

    const { entries } = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
    expect(entries.map((e) => e.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(new Set(entries.map((e) => e.id)).size).toBe(4);
    const [user, call, toolResult, answer] = entries;
    expect(entryText(user!)).toBe('ship build 42, once');
    expect(call!.payload.message.content).toEqual([
      expect.objectContaining({ id: 'toolu_crash_1', name: SIDE_EFFECT_TOOL }),
    ]);
    expect(toolResult!.payload.message).toMatchObject({ toolCallId: 'toolu_crash_1', isError: false });
    expect(entryText(toolResult!)).toBe('side effect done: ship build 42');
    expect(entryText(answer!)).toBe('the build shipped once');
    expect(answer!.id).toBe(result.assistantEntryId);

    // Two attempts, one key (workflow id / assistant entry / tool call id), one side effect.
    const attempts = readLog(files.attempts);
    expect(attempts).toHaveLength(2);
    expect(attempts[1]).toBe(attempts[0]);
    expect(attempts[0]).toMatch(new RegExp(`/${call!.id}/toolu_crash_1$`));
    expect(readLog(files.performed)).toEqual([attempts[0]]);
    // The tool retry did not call the model again: one call before the tool, one after.
    expect(fake.requests).toHaveLength(2);
    fake.assertScriptConsumed();
  });
});
