/**
 * Recovery: how long a turn takes when the worker running its tool is SIGKILLed, and when PostgreSQL
 * goes away while its tool runs, beside quiet turns in the same run (interleaved in rounds, one
 * session per series). Two worker processes serve the task queue and reach PostgreSQL through a TCP
 * proxy the bench cuts; each turn is one tool call (`pause`, 400 ms) and a reply, 0 ms model.
 *
 * Figures: each series' p50/p99, and the time from the event to the reply: from the kill (a new
 * attempt on the surviving worker after the tool's heartbeat timeout) and from the database's return
 * (the waiting activity notices it within its probe interval). A quiet series with the old 60 s tool
 * heartbeat timeout and the old 20 s model heartbeat timeout runs beside, to show what the shorter
 * ones cost a quiet turn.
 *
 *   BENCH_DATABASE_URL=postgres://… npx ts-node --swc bench/recovery.ts
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { fakeReply, startFakeAnthropic, type FakeRequest } from '../src/testing';
import { DEFAULTS } from '../src/config/defaults';
import type { KeelClient } from '../src/client/keel-client';
import {
  keelClient,
  spawnWorkerProcess,
  startTemporalTestEnv,
  uniqueTaskQueue,
  type WorkerProcess,
} from '../test/support/temporal';
import { freshSchemaUrl } from '../test/support/databases';
import { startCuttableProxy } from '../test/support/cuttable-proxy';
import { endsWithToolResult, lastUserText } from '../test/support/durable-turn-helpers';
import { waitUntil } from '../test/support/wait-until';
import { latencyStats, type LatencyStats } from './support/stats';
import { runMain } from './support/run-main';

const log = (line: string) => process.stderr.write(`${line}\n`);

/** How long the database stays away in each outage (longer than the tool activity's old three attempts). */
const OUTAGE_MS = 8_000;
/**
 * Targets, p99, over the quiet turn's p99 of the same run: a killed worker's turn resumes after the
 * tool heartbeat timeout, the wait for the dead worker's sticky queue and the 1 s retry interval; a
 * waiting one within 2 s of the database's return.
 */
const KILL_RESUME_OVER_QUIET_MS =
  DEFAULTS.toolHeartbeatTimeoutMs + DEFAULTS.stickyQueueScheduleToStartTimeoutMs + 1_000;
const OUTAGE_RESUME_OVER_QUIET_MS = 2_000;

export interface RecoveryResult {
  readonly rounds: number;
  readonly quiet: LatencyStats;
  /** Quiet turns with the heartbeat timeouts of before (tool 60 s, model 20 s): what the shorter ones cost. */
  readonly quietOldHeartbeat: LatencyStats;
  /** Turns whose tool's worker was SIGKILLed mid-run. */
  readonly workerKill: LatencyStats;
  /** From the SIGKILL to the turn's reply. */
  readonly killToReply: LatencyStats;
  /** Turns whose tool finished while the database was away for `outageMs`. */
  readonly databaseOutage: LatencyStats;
  /** From the database's return to the turn's reply. */
  readonly backToReply: LatencyStats;
  readonly outageMs: number;
  readonly toolHeartbeatTimeoutMs: number;
  readonly modelHeartbeatTimeoutMs: number;
  /** Kill → reply p99 target: the quiet p99 plus heartbeat timeout, sticky wait and retry interval. */
  readonly killResumeTargetMs: number;
  /** Database back → reply p99 target: the quiet p99 plus 2 s. */
  readonly outageResumeTargetMs: number;
  readonly meetsTargets: boolean;
}

/** Without a PostgreSQL server there is nothing to take away: the bench says so and measures nothing. */
export interface RecoverySkipped {
  readonly skipped: string;
}

export async function run(opts: { rounds?: number; quick?: boolean } = {}): Promise<RecoveryResult | RecoverySkipped> {
  const rounds = opts.rounds ?? (Number(process.env.BENCH_RECOVERY_ROUNDS) || (opts.quick ? 2 : 4));
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!url)
    return {
      skipped:
        'recovery needs a PostgreSQL server to take away: set BENCH_DATABASE_URL (PGlite lives inside the worker)',
    };
  log('recovery: starting a Temporal dev server, the fake model, a proxied schema and two workers…');
  const [env, fake] = await Promise.all([startTemporalTestEnv(), startFakeAnthropic()]);
  const schemaUrl = new URL(await freshSchemaUrl(url));
  const proxy = await startCuttableProxy({ host: schemaUrl.hostname, port: Number(schemaUrl.port || 5432) });
  const viaProxy = new URL(schemaUrl);
  viaProxy.hostname = proxy.host;
  viaProxy.port = String(proxy.port);
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-recovery-'));
  const pids = join(dir, 'tool-pids.log');
  const taskQueue = uniqueTaskQueue('bench-recovery');
  const workerEnv = {
    ...env.processEnv,
    DATABASE_URL: viaProxy.toString(),
    KEEL_TASK_QUEUE: taskQueue,
    KEEL_RESET_MODE: 'none',
    KEEL_TOOLS_MODULE: resolve(__dirname, 'support/recovery-tools.ts'),
    KEEL_BENCH_TOOL_PIDS: pids,
    ...fake.env,
  };
  const workers: WorkerProcess[] = [spawnWorkerProcess(workerEnv), spawnWorkerProcess(workerEnv)];
  fake.respondWith((request: FakeRequest) => {
    const n = Number(/turn (\d+)/.exec(lastUserText(request))?.[1] ?? 0);
    return endsWithToolResult(request)
      ? fakeReply.text(`done ${n}`)
      : fakeReply.toolUse([{ id: `toolu_pause_${n}`, name: 'pause', input: { n } }]);
  });
  let turn = 0;
  /** One turn of `key`; `during` runs once its tool started, and returns when the event happened. */
  const timedTurn = async (
    client: KeelClient,
    key: string,
    during?: (pid: number) => Promise<number>,
  ): Promise<{ ms: number; sinceEventMs?: number }> => {
    const n = ++turn;
    const started = performance.now();
    const reply = client.sendMessage(key, `turn ${n}`);
    reply.catch(() => undefined);
    let eventAt: number | undefined;
    if (during) {
      const pid = await waitUntil(`turn ${n}'s tool to start`, async () => toolPid(pids, n), 60_000, 5);
      eventAt = await during(pid);
    }
    const answer = await reply;
    if (answer.reply !== `done ${n}`) throw new Error(`turn ${n} answered "${answer.reply}"`);
    const ended = performance.now();
    return { ms: ended - started, ...(eventAt !== undefined ? { sinceEventMs: ended - eventAt } : {}) };
  };
  try {
    await Promise.all(workers.map((w) => w.ready));
    const agent = `bench${Date.now().toString(36)}`;
    const client = keelClient(env, taskQueue);
    const oldHeartbeat = keelClient(env, taskQueue, {
      toolHeartbeatTimeoutMs: 60_000,
      modelHeartbeatTimeoutMs: 20_000,
    });
    const series = { quiet: [] as number[], quietOld: [] as number[], kill: [] as number[], outage: [] as number[] };
    const since = { kill: [] as number[], outage: [] as number[] };
    // Warm-up: both workers have run a turn's activities once.
    for (let i = 0; i < 4; i++) await timedTurn(client, `agent:${agent}:warmup`);
    for (let r = 1; r <= rounds; r++) {
      for (let q = 0; q < 3; q++) {
        series.quiet.push((await timedTurn(client, `agent:${agent}:quiet`)).ms);
        series.quietOld.push((await timedTurn(oldHeartbeat, `agent:${agent}:quiet-old`)).ms);
      }
      const killed = await timedTurn(client, `agent:${agent}:kill`, async (pid) => {
        const victim = workers.find((w) => w.child.pid === pid);
        if (!victim) throw new Error(`no bench worker has pid ${pid}`);
        const at = performance.now();
        await victim.kill('SIGKILL');
        workers.splice(workers.indexOf(victim), 1);
        return at;
      });
      series.kill.push(killed.ms);
      since.kill.push(killed.sinceEventMs!);
      // The replacement starts after the turn: its start's CPU would slow the survivor's turn.
      workers.push(spawnWorkerProcess(workerEnv));
      await Promise.all(workers.map((w) => w.ready));
      const outage = await timedTurn(client, `agent:${agent}:outage`, async () => {
        proxy.cut();
        await new Promise((r) => setTimeout(r, OUTAGE_MS));
        proxy.restore();
        return performance.now();
      });
      series.outage.push(outage.ms);
      since.outage.push(outage.sinceEventMs!);
      log(
        `round ${r}/${rounds}: kill ${Math.round(killed.ms)} ms (${Math.round(killed.sinceEventMs!)} after the kill), outage ${Math.round(outage.ms)} ms (${Math.round(outage.sinceEventMs!)} after the return)`,
      );
    }
    const killToReply = latencyStats(since.kill);
    const backToReply = latencyStats(since.outage);
    const quiet = latencyStats(series.quiet);
    const killResumeTargetMs = quiet.p99 + KILL_RESUME_OVER_QUIET_MS;
    const outageResumeTargetMs = quiet.p99 + OUTAGE_RESUME_OVER_QUIET_MS;
    return {
      rounds,
      quiet,
      quietOldHeartbeat: latencyStats(series.quietOld),
      workerKill: latencyStats(series.kill),
      killToReply,
      databaseOutage: latencyStats(series.outage),
      backToReply,
      outageMs: OUTAGE_MS,
      toolHeartbeatTimeoutMs: DEFAULTS.toolHeartbeatTimeoutMs,
      modelHeartbeatTimeoutMs: DEFAULTS.modelHeartbeatTimeoutMs,
      killResumeTargetMs,
      outageResumeTargetMs,
      meetsTargets: killToReply.p99 <= killResumeTargetMs && backToReply.p99 <= outageResumeTargetMs,
    };
  } finally {
    proxy.restore();
    fake.respondWith(undefined);
    await Promise.all(workers.map((w) => w.kill()));
    await proxy.close();
    await fake.close();
    await env.close();
    await dropSchema(url, schemaUrl);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The pid of the worker that started turn `n`'s tool, once it did. */
function toolPid(file: string, n: number): number | undefined {
  if (!existsSync(file)) return undefined;
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.endsWith(` ${n}`));
  return line ? Number(line.split(' ')[0]) : undefined;
}

async function dropSchema(url: string, schemaUrl: URL): Promise<void> {
  const schema = /search_path=(\w+)/.exec(schemaUrl.searchParams.get('options') ?? '')?.[1];
  if (!schema) return;
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

export function ratioLines(r: RecoveryResult | RecoverySkipped): string[] {
  if ('skipped' in r) return [r.skipped];
  return [
    `quiet turn p50/p99: ${r.quiet.p50}/${r.quiet.p99} ms (heartbeat timeouts tool ${r.toolHeartbeatTimeoutMs / 1000} s, model ${r.modelHeartbeatTimeoutMs / 1000} s; with 60 s and 20 s: ${r.quietOldHeartbeat.p50}/${r.quietOldHeartbeat.p99} ms)`,
    `turn with its worker killed p99: ${r.workerKill.p99} ms; kill → reply p99 ${r.killToReply.p99} ms (target ≤ ${r.killResumeTargetMs}: quiet p99 + heartbeat + sticky + retry)`,
    `turn with a ${r.outageMs / 1000} s database outage p99: ${r.databaseOutage.p99} ms; database back → reply p99 ${r.backToReply.p99} ms (target ≤ ${r.outageResumeTargetMs}: quiet p99 + 2 s)`,
    `targets: ${r.meetsTargets ? 'met' : 'NOT met'}`,
  ];
}

if (require.main === module) runMain('recovery', run, ratioLines);
