/**
 * A fleet on one worker (issue 20), in one run on one dev server:
 *   1. live sessions: 1,000 sessions each take a turn and stay cached on the worker
 *      (`maxCachedWorkflows` from the config); the process RSS after them (target ≤ 500 MB);
 *   2. load: 100 of those sessions turn concurrently (0 ms model), several turns each, next to 100
 *      concurrent bare Update + one activity workflows on the same server: turns/s and p99 of both
 *      (target: Keel ≥ 0.7× the bare turns/s).
 *
 *   npx ts-node --swc bench/fleet.ts          # BENCH_DATABASE_URL=postgres://… (PGlite in memory when unset)
 *
 * The worker, the fake model and the store run in this process, so the RSS is theirs together (the
 * dev server is its own process). One JSON object on stdout; `run()` returns the same object.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { openStore } from '../src/store/connect';
import { startFakeAnthropic, fakeReply } from '../test/support/fake-anthropic';
import { testDeps } from '../test/support/keel-deps';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue } from '../test/support/temporal';
import { DEFAULTS } from '../src/config/defaults';
import { startBaselineWorker } from './baseline/worker';
import { baselineStopSignal, baselineTurnUpdate } from './baseline/shared';
import { latencyStats, ratio, type LatencyStats } from './support/stats';

const FULL = { liveSessions: 1_000, concurrent: 100, turnsEach: 5 } as const;
const QUICK = { liveSessions: 100, concurrent: 25, turnsEach: 3 } as const;
/** Sessions started at once while the fleet is built. */
const START_CONCURRENCY = 25;
const RSS_TARGET_MB = 500;
const THROUGHPUT_TARGET = 0.7;

export interface FleetResult {
  readonly database: 'pglite' | 'postgres';
  readonly maxCachedWorkflows: number;
  readonly live: { readonly sessions: number; readonly rssBeforeMb: number; readonly rssAfterMb: number; readonly mbPerSession: number; readonly meetsTarget: boolean };
  readonly load: {
    readonly concurrent: number;
    readonly turnsEach: number;
    readonly keel: { readonly turnsPerSecond: number; readonly latency: LatencyStats };
    readonly bare: { readonly turnsPerSecond: number; readonly latency: LatencyStats };
    /** Keel turns/s over bare turns/s (target ≥ 0.7). */
    readonly ratio: number | null;
    readonly meetsTarget: boolean;
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

export async function run(opts: { quick?: boolean; databaseUrl?: string; liveSessions?: number; concurrent?: number; turnsEach?: number } = {}): Promise<FleetResult> {
  const counts = opts.quick ? QUICK : FULL;
  const liveSessions = opts.liveSessions ?? counts.liveSessions;
  const concurrent = Math.min(opts.concurrent ?? counts.concurrent, liveSessions);
  const turnsEach = opts.turnsEach ?? counts.turnsEach;
  const url = opts.databaseUrl ?? process.env.BENCH_DATABASE_URL;
  log('fleet: starting a Temporal dev server, the fake model and the store…');
  const [env, fake, store] = await Promise.all([
    startTemporalTestEnv(),
    startFakeAnthropic(),
    openStore(url ? { kind: 'postgres', url, maxConnections: 20 } : { kind: 'pglite', dataDir: 'memory://' }),
  ]);
  fake.respondWith(() => fakeReply.text('ok'));
  const keelQueue = uniqueTaskQueue('bench-fleet');
  const baselineQueue = uniqueTaskQueue('bench-fleet-bare');
  const deps = testDeps(store, fake.url);
  const [keelWorker, baselineWorker] = await Promise.all([runInProcessWorker(env, keelQueue, deps), startBaselineWorker(env.nativeConnection, baselineQueue)]);
  const keel = keelClient(env, keelQueue);
  const agent = `fleet${randomBytes(4).toString('hex')}`;
  const keys = Array.from({ length: liveSessions }, (_, i) => `agent:${agent}:s${i}`);
  const bare: Array<WorkflowHandle> = [];
  // The fake keeps every request it answered; that log lives in this process and is not the worker's memory.
  const forgetRequests = () => void ((fake.requests as unknown[]).length = 0);
  try {
    const turn = async (key: string, i: number) => {
      const r = await keel.sendMessage(key, `fleet message ${i}`);
      if (r.reply !== 'ok') throw new Error(`fleet: unexpected reply ${JSON.stringify(r.reply)}`);
    };
    // A warm worker first (bundles, JIT, pools), so the RSS growth is the sessions'.
    await turn(`agent:${agent}:warmup`, 0);
    forgetRequests();
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    log(`fleet: ${liveSessions.toLocaleString()} sessions take a turn each (${START_CONCURRENCY} at a time)…`);
    await inBatches(keys, START_CONCURRENCY, (key) => turn(key, 0));
    forgetRequests(); // the fake's request log is the bench's, not the worker's
    global.gc?.();
    const rssAfter = process.memoryUsage().rss;
    log(`fleet: RSS ${mb(rssBefore)} → ${mb(rssAfter)} MB; ${concurrent} sessions × ${turnsEach} turns concurrently, then as many bare workflows…`);

    const keelLoad = await concurrently(concurrent, turnsEach, (k, t) => turn(keys[k]!, t + 1));
    forgetRequests();
    for (let k = 0; k < concurrent; k++) {
      bare.push(await keel.temporal.workflow.start('baselineSessionWorkflow', { taskQueue: baselineQueue, workflowId: `bench-fleet-bare-${randomUUID()}`, args: [] }));
    }
    const bareLoad = await concurrently(concurrent, turnsEach, (k, t) => bare[k]!.executeUpdate(baselineTurnUpdate, { args: [t] }));
    const r = ratio(keelLoad.turnsPerSecond, bareLoad.turnsPerSecond);
    return {
      database: url ? 'postgres' : 'pglite',
      maxCachedWorkflows: deps.config.maxCachedWorkflows ?? DEFAULTS.maxCachedWorkflows,
      live: {
        sessions: liveSessions,
        rssBeforeMb: mb(rssBefore),
        rssAfterMb: mb(rssAfter),
        mbPerSession: Math.round(((rssAfter - rssBefore) / 1024 / 1024 / liveSessions) * 100) / 100,
        meetsTarget: mb(rssAfter) <= RSS_TARGET_MB,
      },
      load: { concurrent, turnsEach, keel: keelLoad, bare: bareLoad, ratio: r, meetsTarget: r !== null && r >= THROUGHPUT_TARGET },
    };
  } finally {
    await Promise.all(bare.map((h) => h.signal(baselineStopSignal).catch(() => undefined)));
    await Promise.all(
      [...keys, `agent:${agent}:warmup`].map((key) =>
        keel.temporal.workflow
          .getHandle(keel.identify(key).workflowId)
          .terminate('bench finished')
          .catch(() => undefined),
      ),
    );
    await Promise.all([keelWorker.stop(), baselineWorker.stop()]);
    if (url) await store.db.deleteFrom('transcript_entries').where('agent_id', '=', agent).execute();
    if (url) await store.db.deleteFrom('sessions').where('agent_id', '=', agent).execute();
    await Promise.all([fake.close(), store.close()]);
    await env.close();
  }
}

/** Runs `fn` over `items`, `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** `width` lanes, each running `turns` operations one after another; turns/s over the whole and per-op latency. */
async function concurrently(width: number, turns: number, op: (lane: number, turn: number) => Promise<unknown>): Promise<{ turnsPerSecond: number; latency: LatencyStats }> {
  const samples: number[] = [];
  const began = performance.now();
  await Promise.all(
    Array.from({ length: width }, async (_, lane) => {
      for (let t = 0; t < turns; t++) {
        const t0 = performance.now();
        await op(lane, t);
        samples.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  return { turnsPerSecond: Math.round((samples.length / seconds) * 10) / 10, latency: latencyStats(samples) };
}

export function ratioLines(r: FleetResult): string[] {
  const l = r.load;
  return [
    `${r.live.sessions.toLocaleString()} live sessions on one worker (maxCachedWorkflows ${r.maxCachedWorkflows}, ${r.database}): RSS ${r.live.rssBeforeMb} → ${r.live.rssAfterMb} MB (${r.live.mbPerSession} MB/session; target ≤ ${RSS_TARGET_MB} MB: ${r.live.meetsTarget ? 'met' : 'NOT met'})`,
    `${l.concurrent} sessions turning concurrently (${l.turnsEach} turns each, 0 ms model): keel ${l.keel.turnsPerSecond} turns/s vs bare Update+activity ${l.bare.turnsPerSecond}/s = ${l.ratio}× (target ≥ ${THROUGHPUT_TARGET}×: ${l.meetsTarget ? 'met' : 'NOT met'}); p99 ${l.keel.latency.p99} ms vs bare p99 ${l.bare.latency.p99} ms (p50 ${l.keel.latency.p50} / ${l.bare.latency.p50})`,
  ];
}

if (require.main === module) {
  run({ quick: process.argv.includes('--quick') })
    .then((result) => {
      log(ratioLines(result).join('\n'));
      process.stdout.write(`${JSON.stringify(result)}\n`);
    })
    .catch((err: unknown) => {
      log(`fleet failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exitCode = 1;
    })
    .finally(() => process.exit());
}
