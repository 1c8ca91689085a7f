/**
 * A worker SIGKILLed in the middle of a long run, at a round chosen by a printed seed: the run
 * resumes at the same round on another worker, across its hand-ons between runs, with nothing lost
 * and no part read under two idempotency keys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sharedDatabases } from '../support/shared-database';
import { crashSuite } from '../support/crash-rig';
import { readLog, waitForLines } from '../support/crash-tools';
import { isFlushRequest, isSummarizerRequest, routedResponder } from '../support/durable-turn-helpers';
import { reportReader, reportTask } from '../support/report-parts';
import { partsLog } from '../support/report-tools-module';
import { announcedSeed } from '../support/test-seed';

const suite = crashSuite();
const PARTS = 60;
const TOOLS_MODULE = resolve(__dirname, '../support/report-tools-module.ts');

describe.each(sharedDatabases())('a long run across a worker SIGKILL, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'keel-long-run-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('resumes at the round it was killed in, each part read under one key, in order', async () => {
    const seed = announcedSeed('KEEL_LONG_RUN_SEED', 'long-run SIGKILL round');
    const killAt = 5 + (seed % (PARTS - 10));
    rig.fake.respondWith(routedResponder(reportReader));
    const env = { KEEL_TOOLS_MODULE: TOOLS_MODULE, KEEL_TEST_SIDE_EFFECTS: dir };
    const first = await rig.startReadyWorker(env);
    // Short heartbeats notice the dead worker fast; 20 rounds per run makes the kill land near a hand-on.
    const client = rig.client({ toolHeartbeatTimeoutMs: 2_000, modelHeartbeatTimeoutMs: 2_000, maxRoundsPerRun: 20 });
    const reply = client.sendMessage(rig.sessionKey, reportTask(PARTS));
    // Polled often: the kill lands close to the part the seed chose.
    await waitForLines(partsLog(dir), killAt, 120_000, 25);
    await first.kill('SIGKILL');
    await rig.startReadyWorker(env);
    const result = await reply;

    expect(result.reply).toBe(`Done: all ${PARTS} parts read.`);
    const lines = readLog(partsLog(dir)).map((l) => l.split(' '));
    // A tool retried after the kill repeats its own key; no part was read under a second key.
    const keys = new Map<string, string>();
    for (const [key, part] of lines) {
      expect(keys.get(part!) ?? key).toBe(key);
      keys.set(part!, key!);
    }
    expect([...keys.keys()].map(Number)).toEqual(Array.from({ length: PARTS }, (_, i) => i + 1));
    // Each round's model call was billed once, but for the one the kill cut short.
    const agentCalls = rig.fake.requests.filter((r) => !isSummarizerRequest(r) && !isFlushRequest(r));
    expect(agentCalls.length).toBeGreaterThanOrEqual(PARTS + 1);
    expect(agentCalls.length).toBeLessThanOrEqual(PARTS + 2);
    expect(result.modelCalls).toBe(PARTS + 1);
  }, 600_000);
});
