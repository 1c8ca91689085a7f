/**
 * Soak: one session through many turns (default 10,000) with a 0 ms model, across continue-as-new
 * and threshold compactions.
 * Not part of `npm run bench` (it takes a quarter of an hour on 2 cores):
 *   BENCH_DATABASE_URL=postgres://… LONG_SESSION_TURNS=10000 npx ts-node --swc bench/soak/long-session.ts
 * Prints progress on stderr and one JSON object on stdout: turns, runs, p50/p99 by thousand, entries.
 */
import { openStore } from '../../src/store/connect';
import { getSession } from '../../src/store/sessions-repo';
import { startFakeAnthropic, fakeReply } from '../../src/testing';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue } from '../../test/support/temporal';
import { testDeps } from '../../test/support/keel-deps';
import { freshSchemaUrl } from '../../test/support/databases';
import { latencyStats } from '../support/stats';
import { allEntries } from '../../test/support/store-readers';

async function main(): Promise<void> {
  const turns = Number(process.env.LONG_SESSION_TURNS ?? 10_000);
  const url = process.env.BENCH_DATABASE_URL;
  const [env, fake, store] = await Promise.all([
    startTemporalTestEnv(),
    startFakeAnthropic({ defaultResponder: () => fakeReply.text('ok') }),
    url
      ? freshSchemaUrl(url).then((u) => openStore({ kind: 'postgres', url: u }))
      : openStore({ kind: 'pglite', dataDir: 'memory://' }),
  ]);
  const taskQueue = uniqueTaskQueue('keel-soak');
  // A 40k window: threshold compactions every few hundred turns keep the active window realistic,
  // as in a real long-lived session (the fake answers the summarizer and the memory flush with "ok").
  const worker = await runInProcessWorker(
    env,
    taskQueue,
    testDeps(store, fake.url, { config: { contextWindowTokens: 40_000 } }),
  );
  const client = keelClient(env, taskQueue);
  const key = 'agent:soak:main';
  const { workflowId } = client.identify(key);
  const runIds = new Set<string>();
  const byThousand: Array<{ turns: string; p50: number; p99: number }> = [];
  let window: number[] = [];
  const started = Date.now();
  try {
    for (let i = 1; i <= turns; i++) {
      const t = performance.now();
      const r = await client.sendMessage(key, `message ${i}`);
      window.push(performance.now() - t);
      if (r.turn !== i) throw new Error(`turn ${i} came back numbered ${r.turn}`);
      if (i % 250 === 0) runIds.add((await client.temporal.workflow.getHandle(workflowId).describe()).runId);
      if (i % 1000 === 0 || i === turns) {
        const stats = latencyStats(window);
        byThousand.push({ turns: `${i - window.length + 1}-${i}`, p50: stats.p50, p99: stats.p99 });
        process.stderr.write(
          `${i}/${turns} turns · p50 ${stats.p50} ms · ${runIds.size} runs · ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
        );
        window = [];
      }
    }
    const session = await getSession(store.db, 'soak', key);
    const entries = (await allEntries(store.db, 'soak', session!.session_id)).length;
    const status = await client.getStatus(key);
    const summary = {
      turns,
      entries,
      turnsCompleted: status.turnsCompleted,
      compactions: status.compactionCount,
      runsSeen: runIds.size,
      seconds: (Date.now() - started) / 1000,
      byThousand,
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
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
