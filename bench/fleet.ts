/**
 * A fleet on one worker (issue 20), in one run on one dev server:
 *   1. live sessions: 1,000 sessions each take a turn and stay cached on the worker
 *      (`maxCachedWorkflows` from the config); the worker process's RSS after them (target ≤ 500 MB);
 *   2. load: 100 of those sessions turn concurrently (0 ms model), several turns each, next to 100
 *      concurrent bare Update + one activity workflows on the same server: turns/s and p99 of both
 *      (target: Keel ≥ 0.7× the bare turns/s); on PostgreSQL also the I/O floor under the same load (the
 *      bare Update whose activity does a text turn's statements and model call), to tell Keel's own cost from the I/O's.
 *      The three alternate in rounds, so the machine's slow moments fall on all of them alike.
 *
 *   npx ts-node --swc bench/fleet.ts          # BENCH_DATABASE_URL=postgres://… (else the worker's own PGlite folder)
 *
 * The Keel worker is a real worker process (`workers/main.ts`, compiled as the tests run it) and the
 * baseline worker another (`bench/baseline/worker-process.ts`), so each RSS is that worker's alone and
 * neither shares an event loop with the bench's clients and fake model. One JSON object on stdout;
 * `run()` returns the same object.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { openStore, type Store } from '../src/store/connect';
import { freePort } from '../src/temporal/dev-server';
import { startFakeAnthropic, fakeReply } from '../src/testing';
import { keelClient, startTemporalTestEnv, uniqueTaskQueue } from '../test/support/temporal';
import { COMPILED_DIR_ENV, compileEntries, compiledEntryArgs } from '../test/support/compiled-entries';
import { buildWorkflowBundle } from '../test/support/workflow-bundle';
import { DEFAULTS } from '../src/config/defaults';
import { baselineIoTurnUpdate, baselineStopSignal, baselineTurnUpdate } from './baseline/shared';
import { FLOOR_AGENT } from './baseline/activities';
import { latencyStats, ratio, type LatencyStats } from './support/stats';
import { processRssMb, startBenchProcess } from './support/process-rss';
import {
  addCpu,
  cpuPerOp,
  postgresPids,
  sampleCpu,
  sampleThreadCpu,
  type CpuParts,
  type ThreadCpu,
} from './support/process-cpu';
import { runMain } from './support/run-main';

const FULL = { liveSessions: 1_000, concurrent: 100, turnsEach: 6 } as const;
const QUICK = { liveSessions: 100, concurrent: 25, turnsEach: 6 } as const;
/** The load phases (Keel, bare, floor) alternate in this many rounds, each a share of every session's turns. */
const ROUNDS = 3;
/** Sessions started at once while the fleet is built. */
const START_CONCURRENCY = 25;
const RSS_TARGET_MB = 500;
/** Idle time after the sessions' first turns before the RSS that counts is read. */
const SETTLE_MS = 20_000;
const THROUGHPUT_TARGET = 0.7;

export interface FleetResult {
  readonly database: 'pglite' | 'postgres';
  readonly maxCachedWorkflows: number;
  /** RSS of the Keel worker process before and after the live sessions; the baseline worker process's beside it. */
  readonly live: {
    readonly sessions: number;
    readonly rssBeforeMb: number;
    readonly rssRightAfterMb: number;
    readonly rssAfterMb: number;
    readonly heapUsedBeforeMb: number;
    readonly heapUsedAfterMb: number;
    readonly bareRssBeforeMb: number;
    readonly bareRssAfterMb: number;
    readonly mbPerSession: number;
    readonly meetsTarget: boolean;
  };
  readonly load: {
    readonly concurrent: number;
    readonly turnsEach: number;
    readonly keel: { readonly turnsPerSecond: number; readonly latency: LatencyStats };
    /** CPU ms per turn of each process during each phase: on 2 shared cores their sum bounds turns/s. */
    readonly cpuMsPerTurn: { readonly keel: Record<string, number>; readonly bare: Record<string, number> };
    readonly bare: { readonly turnsPerSecond: number; readonly latency: LatencyStats };
    /** The I/O floor under the same load: a bare Update whose activity does a text turn's four statements and model call (PostgreSQL only). */
    readonly floor?: {
      readonly turnsPerSecond: number;
      readonly latency: LatencyStats;
      readonly cpuMsPerTurn: Record<string, number>;
      readonly workerThreadsMsPerTurn: ThreadCpu;
    };
    /** The serving worker's CPU per turn by thread: where Keel's worker spends more than the floor's. */
    readonly workerThreadsMsPerTurn: { readonly keel: ThreadCpu; readonly bare: ThreadCpu };
    /** Keel turns/s over bare turns/s (target ≥ 0.7). */
    readonly ratio: number | null;
    readonly meetsTarget: boolean;
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

export async function run(
  opts: { quick?: boolean; databaseUrl?: string; liveSessions?: number; concurrent?: number; turnsEach?: number } = {},
): Promise<FleetResult> {
  const counts = opts.quick ? QUICK : FULL;
  const liveSessions = opts.liveSessions ?? counts.liveSessions;
  const concurrent = Math.min(opts.concurrent ?? counts.concurrent, liveSessions);
  const turnsEach = opts.turnsEach ?? counts.turnsEach;
  const url = opts.databaseUrl ?? process.env.BENCH_DATABASE_URL;
  // The worker process inherits this environment and has no config file in its fresh KEEL_HOME.
  const maxCachedWorkflows = Number(process.env.KEEL_MAX_CACHED_WORKFLOWS || DEFAULTS.maxCachedWorkflows);
  log('fleet: starting a Temporal dev server, the fake model, a Keel worker process and a baseline worker process…');
  // The worker process runs compiled JavaScript with its prebuilt workflow bundle, as `node dist/workers/main.js` would after `npm run build`.
  process.env[COMPILED_DIR_ENV] ??= compileEntries();
  await buildWorkflowBundle(process.env[COMPILED_DIR_ENV]);
  const [env, fake] = await Promise.all([startTemporalTestEnv(), startFakeAnthropic()]);
  fake.respondWith(() => fakeReply.text('ok'));
  const home = await mkdtemp(join(tmpdir(), 'keel-bench-fleet-'));
  const store: Store | undefined = url ? await openStore({ kind: 'postgres', url, maxConnections: 2 }) : undefined;
  const metricsPort = await freePort();
  const keelQueue = uniqueTaskQueue('bench-fleet');
  const baselineQueue = uniqueTaskQueue('bench-fleet-bare');
  const [keelWorker, baselineWorker] = await Promise.all([
    startBenchProcess(
      // e.g. BENCH_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the worker under load.
      [
        ...(process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
        ...compiledEntryArgs('workers/main.ts'),
      ],
      {
        ...env.processEnv,
        KEEL_TASK_QUEUE: keelQueue,
        KEEL_HOME: home,
        KEEL_RESET_MODE: 'none',
        KEEL_METRICS_PORT: String(metricsPort),
        ...(url ? { DATABASE_URL: url } : {}),
        ...fake.env,
      },
      'keel worker: polling',
    ),
    startBenchProcess(
      // BENCH_BASELINE_NODE_ARGS does the same for the baseline worker (the bare and I/O-floor turns).
      [
        ...(process.env.BENCH_BASELINE_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
        ...compiledEntryArgs('bench/baseline/worker-process.ts'),
      ],
      {
        ...env.processEnv,
        BASELINE_TASK_QUEUE: baselineQueue,
        BASELINE_MAX_CACHED_WORKFLOWS: String(maxCachedWorkflows),
        ...(url ? { BASELINE_FLOOR_DATABASE_URL: url, BASELINE_FLOOR_MODEL_URL: fake.url } : {}),
      },
      'baseline worker: polling',
    ),
  ]);
  const keel = keelClient(env, keelQueue);
  const agent = `fleet${randomBytes(4).toString('hex')}`;
  const keys = Array.from({ length: liveSessions }, (_, i) => `agent:${agent}:s${i}`);
  const bare: Array<WorkflowHandle> = [];
  // The fake keeps every request it answered; that log lives in this process, not the worker's.
  const forgetRequests = () => void ((fake.requests as unknown[]).length = 0);
  try {
    const turn = async (key: string, i: number) => {
      const r = await keel.sendMessage(key, `fleet message ${i}`);
      if (r.reply !== 'ok') throw new Error(`fleet: unexpected reply ${JSON.stringify(r.reply)}`);
    };
    // A warm worker first (bundle, JIT, pools), so the RSS growth is the sessions'.
    await turn(`agent:${agent}:warmup`, 0);
    forgetRequests();
    const rssBefore = processRssMb(keelWorker.child.pid!);
    const heapBefore = await heapUsedMb(metricsPort);
    log(`fleet: ${liveSessions.toLocaleString()} sessions take a turn each (${START_CONCURRENCY} at a time)…`);
    await inBatches(keys, START_CONCURRENCY, (key) => turn(key, 0));
    forgetRequests();
    const rssRightAfter = processRssMb(keelWorker.child.pid!);
    // Live sessions sit idle between turns: the RSS that matters is the worker's once V8's memory
    // reducer has collected the burst's garbage (it runs a few seconds after allocation slows).
    log(`fleet: worker RSS ${rssBefore} → ${rssRightAfter} MB right after; ${SETTLE_MS / 1000} s idle…`);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const rssAfter = processRssMb(keelWorker.child.pid!);
    const heapAfter = await heapUsedMb(metricsPort);
    log(
      `fleet: worker RSS ${rssAfter} MB after ${SETTLE_MS / 1000} s idle; as many bare workflows, one Update each, on the baseline worker…`,
    );
    // The same number of live workflows on the baseline worker (same cache size): what a session costs Temporal's SDK alone.
    const bareRssBefore = processRssMb(baselineWorker.child.pid!);
    const bareIds = Array.from({ length: liveSessions }, () => `bench-fleet-bare-${randomUUID()}`);
    await inBatches(bareIds, START_CONCURRENCY, async (workflowId) => {
      const handle = await keel.temporal.workflow.start('baselineSessionWorkflow', {
        taskQueue: baselineQueue,
        workflowId,
        args: [],
      });
      bare.push(handle);
      await handle.executeUpdate(baselineTurnUpdate, { args: [0] });
    });
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const bareRssAfter = processRssMb(baselineWorker.child.pid!);
    log(
      `fleet: bare worker RSS ${bareRssBefore} → ${bareRssAfter} MB; ${concurrent} sessions × ${turnsEach} turns concurrently, in ${ROUNDS} rounds alternating with ${concurrent} of the bare workflows${url ? ' and the I/O floor' : ''}…`,
    );

    const cpuParts: CpuParts = {
      'keel worker': () => [keelWorker.child.pid!],
      'bare worker': () => [baselineWorker.child.pid!],
      'Temporal server': () => [env.serverPid],
      PostgreSQL: url ? postgresPids : () => [],
      'bench (clients, fake model)': () => [process.pid],
    };
    // The phases take turns, a round each, so a slow minute on this shared machine lands on all of
    // them alike instead of on whichever phase ran then. The I/O floor (PostgreSQL only) is the bare
    // Update whose activity does a turn's statements and model call.
    const phases: Record<'keel' | 'bare' | 'floor', LoadPhase> = {
      keel: newPhase(keelWorker.child.pid!),
      bare: newPhase(baselineWorker.child.pid!),
      floor: newPhase(baselineWorker.child.pid!),
    };
    // The sessions that turn are the last ones to have turned, as the busy sessions of a fleet are: each
    // worker's cache (maxCachedWorkflows) holds them, so no phase pays for replaying evicted histories.
    const busyKeys = keys.slice(-concurrent);
    const busyBare = bare.slice(-concurrent);
    const roundTurns = Math.ceil(turnsEach / ROUNDS);
    for (let done = 0; done < turnsEach; done += roundTurns) {
      const turns = Math.min(roundTurns, turnsEach - done);
      await measure(phases.keel, cpuParts, concurrent, turns, (k, t) => turn(busyKeys[k]!, done + t + 1));
      forgetRequests();
      await measure(phases.bare, cpuParts, concurrent, turns, (k, t) =>
        busyBare[k]!.executeUpdate(baselineTurnUpdate, { args: [done + t] }),
      );
      if (url) {
        await measure(phases.floor, cpuParts, concurrent, turns, (k, t) =>
          busyBare[k]!.executeUpdate(baselineIoTurnUpdate, { args: [done + t] }),
        );
        forgetRequests();
      }
    }
    const keelLoad = phaseResult(phases.keel);
    const bareLoad = phaseResult(phases.bare);
    const keelCpu = phases.keel.cpuPerTurn();
    const bareCpu = phases.bare.cpuPerTurn();
    const floor: FleetResult['load']['floor'] = url
      ? {
          ...phaseResult(phases.floor),
          cpuMsPerTurn: phases.floor.cpuPerTurn(),
          workerThreadsMsPerTurn: phases.floor.threadsPerTurn(),
        }
      : undefined;
    const workerThreadsMsPerTurn = { keel: phases.keel.threadsPerTurn(), bare: phases.bare.threadsPerTurn() };
    const r = ratio(keelLoad.turnsPerSecond, bareLoad.turnsPerSecond);
    return {
      database: url ? 'postgres' : 'pglite',
      maxCachedWorkflows,
      live: {
        sessions: liveSessions,
        rssBeforeMb: rssBefore,
        rssRightAfterMb: rssRightAfter,
        rssAfterMb: rssAfter,
        heapUsedBeforeMb: heapBefore,
        heapUsedAfterMb: heapAfter,
        bareRssBeforeMb: bareRssBefore,
        bareRssAfterMb: bareRssAfter,
        mbPerSession: Math.round(((rssAfter - rssBefore) / liveSessions) * 100) / 100,
        meetsTarget: rssAfter <= RSS_TARGET_MB,
      },
      load: {
        concurrent,
        turnsEach,
        keel: keelLoad,
        bare: bareLoad,
        ...(floor ? { floor } : {}),
        ratio: r,
        meetsTarget: r !== null && r >= THROUGHPUT_TARGET,
        cpuMsPerTurn: { keel: keelCpu, bare: bareCpu },
        workerThreadsMsPerTurn,
      },
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
    if (store) {
      await store.db.deleteFrom('transcript_entries').where('agent_id', 'in', [agent, FLOOR_AGENT]).execute();
      await store.db.deleteFrom('sessions').where('agent_id', 'in', [agent, FLOOR_AGENT]).execute();
      await store.close();
    }
    await fake.close();
    await env.close();
    await rm(home, { recursive: true, force: true });
  }
}

/** The worker's V8 heap in use, from its /metrics (prom-client's default process series). */
async function heapUsedMb(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_heap_size_used_bytes '));
  if (!line) throw new Error('fleet: the worker reported no nodejs_heap_size_used_bytes');
  return Math.round(Number(line.split(' ')[1]) / 1024 / 1024);
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

/** One load phase summed over its rounds: latencies, seconds under load, and CPU by process. */
interface LoadPhase {
  readonly samples: number[];
  seconds: number;
  readonly cpuMs: Record<string, number>;
  /** The threads of the worker process that serves the phase. */
  readonly workerPid: number;
  readonly threadMs: Record<keyof ThreadCpu, number>;
  cpuPerTurn(): Record<string, number>;
  threadsPerTurn(): ThreadCpu;
}

function newPhase(workerPid: number): LoadPhase {
  const phase: LoadPhase = {
    samples: [],
    seconds: 0,
    cpuMs: {},
    workerPid,
    threadMs: { main: 0, node: 0, core: 0 },
    cpuPerTurn: () => cpuPerOp({}, phase.cpuMs, phase.samples.length),
    threadsPerTurn: () => cpuPerOp({}, phase.threadMs, phase.samples.length),
  };
  return phase;
}

/** `width` lanes, each running `turns` operations one after another, added to `phase`. */
async function measure(
  phase: LoadPhase,
  parts: CpuParts,
  width: number,
  turns: number,
  op: (lane: number, turn: number) => Promise<unknown>,
): Promise<void> {
  const cpuBefore = sampleCpu(parts);
  const threadsBefore = sampleThreadCpu(phase.workerPid);
  const began = performance.now();
  await Promise.all(
    Array.from({ length: width }, async (_, lane) => {
      for (let t = 0; t < turns; t++) {
        const t0 = performance.now();
        await op(lane, t);
        phase.samples.push(performance.now() - t0);
      }
    }),
  );
  phase.seconds += (performance.now() - began) / 1000;
  addCpu(phase.cpuMs, cpuBefore, sampleCpu(parts));
  addCpu(phase.threadMs, threadsBefore, sampleThreadCpu(phase.workerPid));
}

/** Turns/s over the phase's rounds and the latency of every turn in them. */
function phaseResult(phase: LoadPhase): { turnsPerSecond: number; latency: LatencyStats } {
  return {
    turnsPerSecond: Math.round((phase.samples.length / phase.seconds) * 10) / 10,
    latency: latencyStats(phase.samples),
  };
}

/** `part a / b` for each process, then the totals: the CPU a turn costs the whole machine. */
function cpuLine(keel: Record<string, number>, bare: Record<string, number>, baseline = 'bare'): string {
  const total = (parts: Record<string, number>) =>
    Math.round(Object.values(parts).reduce((a, b) => a + b, 0) * 10) / 10;
  const parts = Object.keys(keel).map((name) => `${name} ${keel[name]} / ${bare[name] ?? 0}`);
  return `${parts.join(', ')}; all ${total(keel)} / ${total(bare)} (${baseline}/keel ${ratio(total(bare), total(keel))})`;
}

export function ratioLines(r: FleetResult): string[] {
  const l = r.load;
  return [
    `${r.live.sessions.toLocaleString()} live sessions on one worker process (maxCachedWorkflows ${r.maxCachedWorkflows}, ${r.database}): RSS ${r.live.rssBeforeMb} → ${r.live.rssAfterMb} MB after ${SETTLE_MS / 1000} s idle (${r.live.rssRightAfterMb} MB right after the turns; ${r.live.mbPerSession} MB/session; V8 heap used ${r.live.heapUsedBeforeMb} → ${r.live.heapUsedAfterMb} MB; the bare worker with as many live workflows ${r.live.bareRssBeforeMb} → ${r.live.bareRssAfterMb} MB; target ≤ ${RSS_TARGET_MB} MB: ${r.live.meetsTarget ? 'met' : 'NOT met'})`,
    `${l.concurrent} sessions turning concurrently (${l.turnsEach} turns each, 0 ms model): keel ${l.keel.turnsPerSecond} turns/s vs bare Update+activity ${l.bare.turnsPerSecond}/s = ${l.ratio}× (target ≥ ${THROUGHPUT_TARGET}×: ${l.meetsTarget ? 'met' : 'NOT met'}); p99 ${l.keel.latency.p99} ms vs bare p99 ${l.bare.latency.p99} ms (p50 ${l.keel.latency.p50} / ${l.bare.latency.p50})`,
    `CPU ms per turn, keel / bare: ${cpuLine(l.cpuMsPerTurn.keel, l.cpuMsPerTurn.bare)}`,
    ...(l.floor
      ? [
          `I/O floor under the same load (the bare Update whose activity does a turn's four statements and streamed model call, no Keel): ${l.floor.turnsPerSecond} turns/s = ${ratio(l.floor.turnsPerSecond, l.bare.turnsPerSecond)}× bare; keel / floor ${ratio(l.keel.turnsPerSecond, l.floor.turnsPerSecond)}×; p99 ${l.floor.latency.p99} ms; CPU ms per turn, keel / floor: ${cpuLine(l.cpuMsPerTurn.keel, l.floor.cpuMsPerTurn, 'floor')}`,
        ]
      : []),
    `the serving worker's CPU ms per turn by thread (main: activities, pg, the model client; node: workflow threads, GC helpers; core: Temporal's Rust core): keel ${threadLine(l.workerThreadsMsPerTurn.keel)}${l.floor ? `; floor ${threadLine(l.floor.workerThreadsMsPerTurn)}` : ''}; bare ${threadLine(l.workerThreadsMsPerTurn.bare)}`,
  ];
}

function threadLine(t: ThreadCpu): string {
  return `main ${t.main} / node ${t.node} / core ${t.core}`;
}

if (require.main === module)
  runMain('fleet', () => run({ quick: process.argv.includes('--quick') }), ratioLines, { exitWhenDone: true });
