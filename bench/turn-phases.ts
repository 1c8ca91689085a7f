/**
 * Where a turn's time goes, phase by phase (issue 20): a Keel text turn (0 ms fake model), a bare
 * Update + one no-op activity, and a bare Update whose activity does a text turn's I/O alone (the
 * same four kinds of statement and one streamed call to the same fake through the real SDK),
 * alternating on one dev server; then each phase's p50 from the server's event timestamps in the
 * workflows' histories. Keel's activity less the I/O floor's is Keel's own work in a turn; the two
 * workflow tasks are the SDK's activations of each.
 *
 *   npx ts-node --swc bench/turn-phases.ts     # BENCH_DATABASE_URL=postgres://… for PostgreSQL (else PGlite)
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { openStore } from '../src/store/connect';
import { startFakeAnthropic, fakeReply } from '../src/testing';
import { testDeps } from '../test/support/keel-deps';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue } from '../test/support/temporal';
import { startBaselineWorker } from './baseline/worker';
import { baselineIoTurnUpdate, baselineStopSignal, baselineTurnUpdate } from './baseline/shared';
import { PHASES, updatePhases, type Phase, type TimedEvent } from './support/update-phases';
import { runMain } from './support/run-main';

const log = (line: string) => process.stderr.write(`${line}\n`);
const WARMUP = 5;

export interface TurnPhasesResult {
  readonly database: 'pglite' | 'postgres';
  readonly turns: number;
  /** p50 ms of each phase: Keel, bare, Keel / bare, and the bare Update whose activity does a turn's I/O alone. */
  readonly phases: ReadonlyArray<{
    readonly phase: Phase;
    readonly keelMs: number;
    readonly bareMs: number;
    readonly ratio: number | null;
    readonly ioFloorMs: number;
  }>;
}

export async function run(
  opts: { quick?: boolean; turns?: number; databaseUrl?: string } = {},
): Promise<TurnPhasesResult> {
  const turns = opts.turns ?? (opts.quick ? 20 : 60);
  const url = opts.databaseUrl ?? process.env.BENCH_DATABASE_URL;
  log('turn-phases: starting a Temporal dev server, the fake model, the store and both workers…');
  const [env, fake, store] = await Promise.all([
    startTemporalTestEnv(),
    startFakeAnthropic(),
    openStore(url ? { kind: 'postgres', url, maxConnections: 2 } : { kind: 'pglite', dataDir: 'memory://' }),
  ]);
  fake.respondWith(() => fakeReply.text('ok'));
  const [keelQueue, bareQueue] = [uniqueTaskQueue('bench-phases'), uniqueTaskQueue('bench-phases-bare')];
  const [keelWorker, bareWorker] = await Promise.all([
    runInProcessWorker(env, keelQueue, testDeps(store, fake.url)),
    startBaselineWorker(env.nativeConnection, bareQueue, { floor: { db: store.db, modelUrl: fake.url } }),
  ]);
  const keel = keelClient(env, keelQueue);
  const client = keel.temporal;
  const start = (name: string) =>
    client.workflow.start('baselineSessionWorkflow', {
      taskQueue: bareQueue,
      workflowId: `bench-phases-${name}-${randomUUID()}`,
      args: [],
    });
  const [bare, floor] = await Promise.all([start('bare'), start('io-floor')]);
  try {
    const key = `agent:phases${randomUUID().slice(0, 8)}:main`;
    log(`turn-phases: ${turns} turns of each (after ${WARMUP} warm-up), alternating…`);
    for (let i = 0; i < WARMUP + turns; i++) {
      await keel.sendMessage(key, `Message ${i}: how is my order?`);
      await bare.executeUpdate(baselineTurnUpdate, { args: [i] });
      await floor.executeUpdate(baselineIoTurnUpdate, { args: [i] });
    }
    const [k, b, f] = await Promise.all([
      historyPhases(client, keel.identify(key).workflowId),
      historyPhases(client, bare.workflowId),
      historyPhases(client, floor.workflowId),
    ]);
    const p50 = (rows: Array<Record<Phase, number>>, phase: Phase) => round(median(rows.map((r) => r[phase])));
    return {
      database: url ? 'postgres' : 'pglite',
      turns: Math.min(k.length, b.length, f.length),
      phases: PHASES.map((phase) => {
        const [keelMs, bareMs, ioFloorMs] = [p50(k, phase), p50(b, phase), p50(f, phase)];
        return { phase, keelMs, bareMs, ratio: bareMs > 0 ? round(keelMs / bareMs) : null, ioFloorMs };
      }),
    };
  } finally {
    fake.respondWith(undefined);
    await Promise.all([bare, floor].map((h) => h.signal(baselineStopSignal).catch(() => undefined)));
    await Promise.all([keelWorker.stop(), bareWorker.stop()]);
    await fake.close();
    await store.close();
    await env.close();
  }
}

async function historyPhases(client: Client, workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events: TimedEvent[] = (history.events ?? []).map((e) => ({
    type: (temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? '').replace(/^EVENT_TYPE_/, ''),
    atMs: Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6,
  }));
  return updatePhases(events, WARMUP);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const round = (x: number) => Math.round(x * 100) / 100;

export function ratioLines(r: TurnPhasesResult): string[] {
  return [
    `p50 ms per phase over ${r.turns} turns (${r.database}), keel / bare Update+activity (I/O floor: a bare Update whose activity does a turn's four statements and model call):`,
    ...r.phases.map(
      (p) =>
        `  ${p.phase}: ${p.keelMs} / ${p.bareMs}${p.ratio === null ? '' : ` = ${p.ratio}×`} (I/O floor ${p.ioFloorMs})`,
    ),
  ];
}

if (require.main === module) runMain('turn-phases', run, ratioLines);
