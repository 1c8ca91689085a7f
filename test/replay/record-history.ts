/**
 * Records the Temporal histories that test/replay/replay.test.ts replays, so a code or SDK change
 * that would break running sessions fails CI. Re-record only on purpose, when a change is meant to
 * be incompatible and is shipped with a migration plan:
 *   npx ts-node --swc test/replay/record-history.ts
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { temporal } from '@temporalio/proto';
import { openStore } from '../../src/store/connect';
import { ToolRegistry } from '../../src/tools/registry';
import { startFakeAnthropic, fakeReply } from '../support/fake-anthropic';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue } from '../support/temporal';
import { testDeps } from '../support/keel-deps';

async function main(): Promise<void> {
  const [env, fake, store] = await Promise.all([startTemporalTestEnv(), startFakeAnthropic(), openStore({ kind: 'pglite', dataDir: 'memory://' })]);
  const taskQueue = uniqueTaskQueue();
  const tools = new ToolRegistry().register({ name: 'lookup', description: 'Looks a word up', input: z.object({ word: z.string() }), run: async ({ word }) => `${word}: found` });
  const worker = await runInProcessWorker(env, taskQueue, testDeps(store, fake.url, { tools }));
  try {
    const client = keelClient(env, taskQueue);
    const key = 'agent:replay:main';
    fake.enqueue(fakeReply.text('hello'), fakeReply.toolUse([{ id: 'toolu_r1', name: 'lookup', input: { word: 'keel' } }]), fakeReply.text('keel: found'), fakeReply.text('NO_REPLY'));
    await client.sendMessage(key, 'hi');
    await client.sendMessage(key, 'look up keel');
    await client.sendMessage(key, 'quiet please');
    // The compaction's memory flush answers NO_REPLY; the summarizer writes a summary.
    fake.respondWith((req) => fakeReply.text(req.rawBody.includes('Pre-compaction memory flush') ? 'NO_REPLY' : 'The user looked up keel; it was found.'));
    await client.compact(key, { keepRecentTokens: 0 });
    const { workflowId } = client.identify(key);
    const history = await client.temporal.workflow.getHandle(workflowId).fetchHistory();
    const file = join(__dirname, 'histories', 'session-turns-tool-silent-compact.binpb');
    await writeFile(file, temporal.api.history.v1.History.encode(history).finish());
    process.stderr.write(`recorded ${history.events?.length} events → ${file}\n`);
  } finally {
    await worker.stop();
    await store.close();
    await fake.close();
    await env.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
