/**
 * Durable-turn latency on one real Temporal dev server, in one run:
 *   1. a Keel turn (sendMessage → reply, 0 ms fake model) next to its baseline of the same shape
 *      (a bare Update whose handler runs one regular no-op activity) and a bare workflow start;
 *   2. the turn at 100,000 transcript entries (compacted near the end) next to 1,000 entries, and
 *      at 100,000 uncompacted entries within a time budget;
 *   3. Temporal history bytes per turn on each of those sessions (must be flat: Keel passes ids,
 *      never the transcript).
 *
 *   npx ts-node --swc bench/turn-latency.ts
 *   BENCH_TURNS=100  BENCH_DATABASE_URL=postgres://…  (PGlite in memory when unset)
 *
 * A readable table on stderr, one JSON object on stdout; `run()` returns the same object.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import type { Client } from '@temporalio/client';
import { DEFAULTS } from '../src/config/defaults';
import { openStore, type Store } from '../src/store/connect';
import { deleteSessionCascade } from '../src/store/sessions-repo';
import { ensureSession } from '../test/support/ensure-session';
import { lastCompaction } from '../src/store/entries-repo';
import { estimateTokens } from '../src/context/estimate-tokens';
import { startFakeModelProcess, type FakeModelProcess } from './support/fake-model-process';
import { testDeps } from '../test/support/keel-deps';
import { keelClient, runInProcessWorker, startTemporalTestEnv, uniqueTaskQueue } from '../test/support/temporal';
import type { KeelClient } from '../src/client/keel-client';
import { startBaselineWorker } from './baseline/worker';
import { baselineStopSignal, baselineTurnUpdate } from './baseline/shared';
import {
  latencyStats,
  ratio,
  round1,
  timeInterleaved,
  timeSequential,
  type LatencyStats,
  type OutsideTime,
} from './support/stats';
import { historyGrowth, historySize, type HistoryGrowth, type HistorySize } from './support/history-bytes';
import { seedTranscript, type SeedReport } from './support/seed-transcript';
import { runMain } from './support/run-main';

/** Timed turns per series (BENCH_TURNS overrides). */
const DEFAULT_TURNS = 100;
/** Untimed turns first: worker caches, JIT, connection pools. */
const DEFAULT_WARMUP = 10;
/** The small and large sessions of the scale comparison. */
const SMALL_SESSION_ENTRIES = 1_000;
const LARGE_SESSION_ENTRIES = 100_000;
/** Entries written after the seeded compaction (turns since it happened). */
const ENTRIES_AFTER_COMPACTION = 200;
/**
 * Time allowed for the first turn on the uncompacted 100k session (seeding excluded): it carries a
 * preflight compaction of the whole transcript (~60 s measured here with a 0 ms fake summarizer).
 */
const DEFAULT_UNCOMPACTED_BUDGET_MS = 180_000;
/** Later turns on that session stop starting after this much time. */
const LATER_TURNS_BUDGET_MS = 30_000;
/** The big active window of issue 20: 2,000 entries holding ~150k tokens, against a fresh session. */
const WINDOW_ENTRIES = 2_000;
const WINDOW_RESULT_PAD_CHARS = 370;
/** Turns attempted on the uncompacted 100k session (the first carries the compaction). */
const UNCOMPACTED_TURNS = 10;

export interface TurnLatencyOptions {
  /** Timed turns per series; default BENCH_TURNS or 100. */
  readonly turns?: number;
  readonly warmup?: number;
  readonly largeEntries?: number;
  readonly smallEntries?: number;
  /** Time budget for the uncompacted large session; 0 skips it. */
  readonly uncompactedBudgetMs?: number;
  /** PostgreSQL URL; default BENCH_DATABASE_URL, else PGlite in memory. */
  readonly databaseUrl?: string;
  /** `npm run bench -- --quick`: fewer turns, a 10,000-entry large session, no uncompacted series. */
  readonly quick?: boolean;
}

/** The counts `--quick` uses (each still overridable). */
const QUICK = { turns: 20, warmup: 3, largeEntries: 10_000, uncompactedBudgetMs: 0 } as const;

/** One session the bench drove: what was in it, how fast its turns were, what they cost in history. */
export interface SessionSeries {
  readonly seed?: SeedReport | undefined;
  readonly latency: LatencyStats;
  /**
   * The same turns less the fake model's own work on each request (parsing and checking a prompt
   * of this size): the turn against a model that costs nothing, which the targets are about.
   */
  readonly ownLatency: LatencyStats;
  /** The fake model's own work per turn, mean ms. */
  readonly fakeModelMs: number;
  readonly history: HistoryGrowth;
}

/** A model request's size and the time to encode it as JSON. */
export interface RequestEncoding {
  readonly kilobytes: number;
  readonly encodeMs: number;
}

export interface UncompactedSeries {
  /** False when not even one timed turn finished within the budget. */
  readonly finished: boolean;
  /** Entries seeded (the session may not have been seeded in full when the budget ran out). */
  readonly entries: number;
  readonly budgetMs: number;
  readonly seed?: SeedReport | undefined;
  /** The first turn on the uncompacted session, whatever Keel did in it (e.g. a preflight compaction). */
  readonly firstTurnMs?: number | undefined;
  /** Whether the session had a compaction entry after the turns (Keel compacted it). */
  readonly compactedByKeel?: boolean | undefined;
  /** The turns after the first. */
  readonly latency?: LatencyStats | undefined;
  readonly note: string;
}

export interface TurnLatencyResult {
  readonly setup: {
    turns: number;
    warmup: number;
    database: 'pglite' | 'postgres';
    cpus: number;
    node: string;
    model: string;
  };
  /** Keel turn on a fresh session vs the bare Update + one activity vs a bare workflow start. */
  readonly latency: {
    readonly keelTurn: SessionSeries;
    readonly baselineUpdate: LatencyStats;
    readonly baselineStart: LatencyStats;
    /** keelTurn p50 / baselineUpdate p50, and the same at p99. */
    readonly ratioP50: number | null;
    readonly ratioP99: number | null;
  };
  /** A turn on a 2,000-entry / ~150k-token active window vs a turn on a fresh session, interleaved (target ≤ 1.2×). */
  readonly window: {
    readonly fresh: SessionSeries;
    readonly large: SessionSeries;
    readonly ratioP50: number | null;
    readonly ratioP99: number | null;
    /** The same ratios on `ownLatency` (the fake model's work taken out): the target's measure. */
    readonly ownRatioP50: number | null;
    readonly ownRatioP99: number | null;
    /**
     * Each session's last model request, and what encoding it whole as JSON costs in this process
     * (`JSON.stringify` of the body, min of five): what a client that encodes every request afresh
     * pays a call. Keel encodes only a call's new messages (src/model/json-request-body.ts); what it
     * does pay stays in `ownLatency`.
     */
    readonly requestEncoding: { readonly large: RequestEncoding; readonly fresh: RequestEncoding };
  };
  readonly scale: {
    readonly small: SessionSeries;
    readonly largeCompacted: SessionSeries;
    readonly largeUncompacted: UncompactedSeries;
    /** largeCompacted / small, p50 and p99. */
    readonly ratioP50: number | null;
    readonly ratioP99: number | null;
  };
  /** Temporal history bytes per turn on each session: flat means the transcript stays out of history. */
  readonly historyBytesPerTurn: {
    readonly freshSession: number | null;
    readonly smallSession: number | null;
    readonly largeSession: number | null;
    /** smallSession / freshSession (≈ 1 when flat). */
    readonly ratio: number | null;
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Runs every measurement on one dev server and returns the numbers. */
export async function run(opts: TurnLatencyOptions = {}): Promise<TurnLatencyResult> {
  const quick = opts.quick ? QUICK : undefined;
  const turns = opts.turns ?? positiveInt(process.env.BENCH_TURNS) ?? quick?.turns ?? DEFAULT_TURNS;
  const warmup = opts.warmup ?? quick?.warmup ?? DEFAULT_WARMUP;
  const databaseUrl = opts.databaseUrl ?? process.env.BENCH_DATABASE_URL;
  const budgetMs = opts.uncompactedBudgetMs ?? quick?.uncompactedBudgetMs ?? DEFAULT_UNCOMPACTED_BUDGET_MS;

  log('turn-latency: starting a Temporal dev server, the fake model and the store…');
  const [env, fake, store] = await Promise.all([
    startTemporalTestEnv(),
    startFakeModelProcess(),
    openStore(databaseUrl ? { kind: 'postgres', url: databaseUrl } : { kind: 'pglite', dataDir: 'memory://' }),
  ]);
  const keelQueue = uniqueTaskQueue('bench-keel');
  const baselineQueue = uniqueTaskQueue('bench-baseline');
  const [keelWorker, baselineWorker] = await Promise.all([
    runInProcessWorker(env, keelQueue, testDeps(store, fake.url)),
    startBaselineWorker(env.nativeConnection, baselineQueue),
  ]);
  const keel = keelClient(env, keelQueue);
  const cleanup: Array<() => Promise<void>> = [];
  try {
    const agentId = `bench${randomBytes(4).toString('hex')}`;
    const sessions = new SessionDriver(keel, store, fake, agentId, cleanup);

    log(
      `turn-latency: ${turns} rounds (after ${warmup} warm-up rounds) of: a Keel turn, a bare Update + one activity, a bare workflow start…`,
    );
    const fresh = await sessions.prepare('fresh');
    const baseline = await startBaselineSession(keel.temporal, baselineQueue, cleanup);
    const startPrefix = `bench-start-${randomBytes(4).toString('hex')}`;
    const [keelTurn, baselineUpdate, baselineStart] = await measureTogether(keel.temporal, turns, warmup, [
      { workflowId: fresh.workflowId, op: (i) => sessions.turn(fresh.sessionKey, i) },
      { op: (i) => baseline.executeUpdate(baselineTurnUpdate, { args: [i] }) },
      {
        op: (i) =>
          keel.temporal.workflow.execute('baselineStartWorkflow', {
            taskQueue: baselineQueue,
            workflowId: `${startPrefix}-${i}`,
            args: [i],
          }),
      },
    ]);

    const bigWindow = await sessions.prepare('window', {
      entries: WINDOW_ENTRIES,
      resultPadChars: WINDOW_RESULT_PAD_CHARS,
    });
    const fresh2 = await sessions.prepare('fresh2');
    log(
      `turn-latency: ${turns} rounds of a turn on a fresh session and one on a ${WINDOW_ENTRIES.toLocaleString()}-entry window (${bigWindow.seed!.activeTokens.toLocaleString()} tokens)…`,
    );
    const [freshSeries, windowSeries] = await measureTogether(keel.temporal, turns, warmup, [
      { workflowId: fresh2.workflowId, op: (i) => sessions.turn(fresh2.sessionKey, i) },
      { workflowId: bigWindow.workflowId, op: (i) => sessions.turn(bigWindow.sessionKey, i) },
    ]);

    const smallEntries = opts.smallEntries ?? SMALL_SESSION_ENTRIES;
    const largeEntries = opts.largeEntries ?? quick?.largeEntries ?? LARGE_SESSION_ENTRIES;
    const small = await sessions.prepare('small', { entries: smallEntries });
    const large = await sessions.prepare('large', {
      entries: largeEntries,
      compaction: { entriesAfter: ENTRIES_AFTER_COMPACTION, keepRecentTokens: DEFAULTS.keepRecentTokens },
    });
    log(
      `turn-latency: ${turns} rounds of a turn at ${smallEntries.toLocaleString()} entries and one at ${largeEntries.toLocaleString()} (compacted)…`,
    );
    const [smallSeries, largeSeries] = await measureTogether(keel.temporal, turns, warmup, [
      { workflowId: small.workflowId, op: (i) => sessions.turn(small.sessionKey, i) },
      { workflowId: large.workflowId, op: (i) => sessions.turn(large.sessionKey, i) },
    ]);
    const smallResult: SessionSeries = { seed: small.seed, ...smallSeries! };
    const largeCompacted: SessionSeries = { seed: large.seed, ...largeSeries! };
    const largeUncompacted = await measureUncompacted(sessions, store, largeEntries, budgetMs);

    const keelSeries = keelTurn as SessionSeries;
    const baseUpdate = baselineUpdate!.latency;
    return {
      setup: {
        turns,
        warmup,
        database: databaseUrl ? 'postgres' : 'pglite',
        cpus: cpus().length,
        node: process.version,
        model: 'fake, 0 ms',
      },
      latency: {
        keelTurn: keelSeries,
        baselineUpdate: baseUpdate,
        baselineStart: baselineStart!.latency,
        ratioP50: ratio(keelSeries.latency.p50, baseUpdate.p50),
        ratioP99: ratio(keelSeries.latency.p99, baseUpdate.p99),
      },
      window: {
        fresh: freshSeries!,
        large: { seed: bigWindow.seed, ...windowSeries! },
        ratioP50: ratio(windowSeries!.latency.p50, freshSeries!.latency.p50),
        ratioP99: ratio(windowSeries!.latency.p99, freshSeries!.latency.p99),
        ownRatioP50: ratio(windowSeries!.ownLatency.p50, freshSeries!.ownLatency.p50),
        ownRatioP99: ratio(windowSeries!.ownLatency.p99, freshSeries!.ownLatency.p99),
        requestEncoding: {
          large: await sessions.requestEncoding(bigWindow.sessionKey),
          fresh: await sessions.requestEncoding(fresh2.sessionKey),
        },
      },
      scale: {
        small: smallResult,
        largeCompacted,
        largeUncompacted,
        ratioP50: ratio(largeCompacted.latency.p50, smallResult.latency.p50),
        ratioP99: ratio(largeCompacted.latency.p99, smallResult.latency.p99),
      },
      historyBytesPerTurn: {
        freshSession: keelSeries.history.bytesPerTurn,
        smallSession: smallResult.history.bytesPerTurn,
        largeSession: largeCompacted.history.bytesPerTurn,
        ratio:
          keelSeries.history.bytesPerTurn && smallResult.history.bytesPerTurn !== null
            ? ratio(smallResult.history.bytesPerTurn, keelSeries.history.bytesPerTurn)
            : null,
      },
    };
  } finally {
    for (const step of cleanup)
      await step().catch((err: unknown) => log(`turn-latency: cleanup failed: ${String(err)}`));
    await Promise.all([keelWorker.stop(), baselineWorker.stop()]);
    await Promise.all([fake.close(), store.close()]);
    await env.close();
  }
}

/** Creates bench sessions (optionally seeded) and runs turns on them. */
class SessionDriver {
  constructor(
    private readonly keel: KeelClient,
    private readonly store: Store,
    private readonly fake: FakeModelProcess,
    private readonly agentId: string,
    private readonly cleanup: Array<() => Promise<void>>,
  ) {}

  /** A session key for `name`, seeded first when `seed` is given (the workflow starts on the first turn). */
  async prepare(
    name: string,
    seed?: {
      entries: number;
      resultPadChars?: number;
      compaction?: { entriesAfter: number; keepRecentTokens: number };
    },
  ): Promise<PreparedSession> {
    const sessionKey = `agent:${this.agentId}:${name}`;
    const { workflowId } = this.keel.identify(sessionKey);
    this.cleanup.push(() =>
      this.keel.temporal.workflow
        .getHandle(workflowId)
        .terminate('bench finished')
        .then(() => undefined),
    );
    if (!seed) return { agentId: this.agentId, sessionKey, workflowId };
    const row = await ensureSession(this.store.db, {
      agentId: this.agentId,
      sessionKey,
      newSessionId: randomUUID(),
      now: new Date(),
    });
    const report = await seedTranscript(this.store.db, this.agentId, row.session_id, {
      ...seed,
      estimate: (m) => estimateTokens(m),
    });
    log(
      `  seeded ${report.entries.toLocaleString()} entries (${report.tokens.toLocaleString()} tokens; active window ${report.activeEntries} entries) in ${report.seedMs} ms`,
    );
    // Bench rows in a shared PostgreSQL are removed; PGlite in memory goes away with the process.
    if (this.store.target.kind === 'postgres')
      this.cleanup.push(() =>
        deleteSessionCascade(this.store.db, this.agentId, sessionKey, row.session_id).then(() => undefined),
      );
    return { agentId: this.agentId, sessionKey, workflowId, sessionId: row.session_id, seed: report };
  }

  /**
   * One turn; resolves to the fake model's own work on its requests. A reply other than the
   * fake model's means the bench measured something else.
   */
  async turn(sessionKey: string, i: number): Promise<OutsideTime> {
    const result = await this.keel.sendMessage(sessionKey, `Bench message ${i}: how is my order doing?`);
    if (result.reply !== 'ok') throw new Error(`turn-latency: unexpected reply ${JSON.stringify(result.reply)}`);
    const asked = performance.now();
    const requests = await this.fake.take(sessionKey);
    return { outsideMs: requests.reduce((ms, r) => ms + r.fakeWorkMs, 0), bookkeepingMs: performance.now() - asked };
  }

  /** The session's last model request (its largest of the turn) and the time to encode its body as JSON. */
  async requestEncoding(sessionKey: string): Promise<RequestEncoding> {
    const rawBody = await this.fake.body(sessionKey);
    if (rawBody === undefined) return { kilobytes: 0, encodeMs: 0 };
    const body: unknown = JSON.parse(rawBody);
    let best = Infinity;
    for (let i = 0; i < 5; i++) {
      const began = performance.now();
      JSON.stringify(body);
      best = Math.min(best, performance.now() - began);
    }
    return { kilobytes: Math.round(rawBody.length / 1024), encodeMs: round1(best) };
  }
}

interface PreparedSession {
  readonly agentId: string;
  readonly sessionKey: string;
  readonly workflowId: string;
  readonly sessionId?: string;
  readonly seed?: SeedReport;
}

/** A series to time; with a workflowId, its history is measured around the timed rounds. */
interface Series {
  readonly workflowId?: string;
  /** Resolves to the fake model's own work during the call (`OutsideTime`), when it has any. */
  readonly op: (i: number) => Promise<unknown>;
}

/** Warm-up rounds, history sizes, timed interleaved rounds, history sizes. */
async function measureTogether(
  client: Client,
  turns: number,
  warmup: number,
  series: readonly Series[],
): Promise<Array<{ latency: LatencyStats; ownLatency: LatencyStats; fakeModelMs: number; history: HistoryGrowth }>> {
  for (let i = 0; i < warmup; i++) for (const s of series) await s.op(i);
  const sizes = (): Promise<Array<HistorySize | undefined>> =>
    Promise.all(series.map((s) => (s.workflowId ? historySize(client, s.workflowId) : undefined)));
  const before = await sizes();
  const samples = await timeInterleaved(
    series.map((s) => (i: number) => s.op(warmup + i)),
    turns,
    0,
  );
  const after = await sizes();
  return series.map((_, k) => ({
    latency: latencyStats(samples[k]!.timed),
    ownLatency: latencyStats(samples[k]!.own),
    fakeModelMs: round1(samples[k]!.timed.reduce((sum, ms, j) => sum + ms - samples[k]!.own[j]!, 0) / turns),
    history:
      before[k] && after[k]
        ? historyGrowth(before[k]!, after[k]!, turns)
        : { turns, bytesPerTurn: null, eventsPerTurn: null },
  }));
}

/**
 * The uncompacted large session. Keel compacts before a turn whose context cannot fit (preflight),
 * so the first turn carries that compaction and later turns run on the compacted window: the first
 * turn is reported on its own. Runs under a time budget; a first turn that outlives it is reported
 * as not finished (cleanup then terminates the workflow).
 */
async function measureUncompacted(
  sessions: SessionDriver,
  store: Store,
  entries: number,
  budgetMs: number,
): Promise<UncompactedSeries> {
  if (budgetMs <= 0) return { finished: false, entries, budgetMs, note: 'skipped (budget 0)' };
  log(
    `turn-latency: ${entries.toLocaleString()} entries without compaction (budget ${Math.round(budgetMs / 1000)} s)…`,
  );
  const s = await sessions.prepare('uncompacted', { entries });
  let timer: NodeJS.Timeout | undefined;
  const overBudget = new Promise<'over'>((resolve) => (timer = setTimeout(() => resolve('over'), budgetMs)));
  const began = performance.now();
  const first = sessions.turn(s.sessionKey, 0);
  try {
    const outcome = await Promise.race([first, overBudget]);
    if (outcome === 'over') {
      first.catch(() => {}); // settles (or fails) when cleanup terminates the workflow
      return {
        finished: false,
        entries,
        budgetMs,
        seed: s.seed,
        note: `the first turn did not finish within ${Math.round(budgetMs / 1000)} s`,
      };
    }
    const firstTurnMs = performance.now() - began;
    const later = await timeSequential(
      (i) => sessions.turn(s.sessionKey, i + 1),
      UNCOMPACTED_TURNS - 1,
      0,
      LATER_TURNS_BUDGET_MS,
    );
    const compaction = await lastCompaction(store.db, s.agentId, s.sessionId!);
    const compactedByKeel = compaction !== undefined;
    const runs = await store.db
      .selectFrom('compactions')
      .select(['trigger', 'status', 'degraded'])
      .where('agent_id', '=', s.agentId)
      .where('session_id', '=', s.sessionId!)
      .execute();
    const how =
      runs.map((c) => `${c.trigger} ${c.status}${c.degraded ? ' (degraded)' : ''}`).join(', ') || 'no compactions row';
    return {
      finished: true,
      entries,
      budgetMs,
      seed: s.seed,
      firstTurnMs: Math.round(firstTurnMs),
      compactedByKeel,
      ...(later.length > 0 ? { latency: latencyStats(later) } : {}),
      note: compactedByKeel
        ? `Keel compacted the session in the first turn (${how}); ${later.length} later turn(s) ran on the compacted window`
        : `${later.length} later turn(s) read the whole transcript`,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Starts the baseline session workflow; cleanup signals it to stop and waits for it. */
async function startBaselineSession(client: Client, taskQueue: string, cleanup: Array<() => Promise<void>>) {
  const handle = await client.workflow.start('baselineSessionWorkflow', {
    taskQueue,
    workflowId: `bench-baseline-${randomUUID()}`,
    args: [],
  });
  cleanup.push(async () => {
    await handle.signal(baselineStopSignal);
    await handle.result();
  });
  return handle;
}

function positiveInt(s: string | undefined): number | undefined {
  const n = s === undefined ? NaN : Number(s);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** The headline comparisons, one line each (bench/run.ts prints these). */
export function ratioLines(r: TurnLatencyResult): string[] {
  const l = r.latency;
  const s = r.scale;
  const h = r.historyBytesPerTurn;
  return [
    `keel turn / bare Update+activity: p50 ${l.keelTurn.latency.p50} / ${l.baselineUpdate.p50} ms = ${l.ratioP50}×, p99 ${l.keelTurn.latency.p99} / ${l.baselineUpdate.p99} ms = ${l.ratioP99}× (bare workflow start p50 ${l.baselineStart.p50} ms)`,
    `turn on a ${r.window.large.seed?.activeEntries.toLocaleString()}-entry / ${r.window.large.seed?.activeTokens.toLocaleString()}-token window / fresh session, the fake model's own work taken out (${r.window.large.fakeModelMs} / ${r.window.fresh.fakeModelMs} ms a turn): p50 ${r.window.large.ownLatency.p50} / ${r.window.fresh.ownLatency.p50} ms = ${r.window.ownRatioP50}× (target ≤ 1.2×), p99 ${r.window.large.ownLatency.p99} / ${r.window.fresh.ownLatency.p99} ms = ${r.window.ownRatioP99}×; as timed: p50 ${r.window.large.latency.p50} / ${r.window.fresh.latency.p50} ms = ${r.window.ratioP50}×, p99 ${r.window.ratioP99}×; the request itself, and encoding it whole as JSON (what a client without Keel's per-message encoding pays a call): ${r.window.requestEncoding.large.kilobytes} KB ${r.window.requestEncoding.large.encodeMs} ms / ${r.window.requestEncoding.fresh.kilobytes} KB ${r.window.requestEncoding.fresh.encodeMs} ms`,
    `turn at ${s.largeCompacted.seed?.entries.toLocaleString()} entries (compacted) / ${s.small.seed?.entries.toLocaleString()} entries: p50 ${s.largeCompacted.latency.p50} / ${s.small.latency.p50} ms = ${s.ratioP50}×, p99 ${s.largeCompacted.latency.p99} / ${s.small.latency.p99} ms = ${s.ratioP99}×`,
    s.largeUncompacted.finished
      ? `turn at ${s.largeUncompacted.entries.toLocaleString()} entries uncompacted: first turn ${s.largeUncompacted.firstTurnMs} ms, later turns p50 ${s.largeUncompacted.latency?.p50 ?? '-'} ms (${s.largeUncompacted.note})`
      : `turn at ${s.largeUncompacted.entries.toLocaleString()} entries uncompacted: not measured — ${s.largeUncompacted.note}`,
    `history bytes/turn: fresh ${h.freshSession}, ${s.small.seed?.entries.toLocaleString()} entries ${h.smallSession}, ${s.largeCompacted.seed?.entries.toLocaleString()} entries ${h.largeSession} (small/fresh = ${h.ratio}×)`,
  ];
}

/** The people-readable table for stderr. */
export function formatTable(r: TurnLatencyResult): string {
  const rows: Array<[string, string, string, string, string, string]> = [
    ['series', 'n', 'p50 ms', 'p99 ms', 'history B/turn', 'events/turn'],
  ];
  const add = (name: string, lat: LatencyStats | undefined, hist?: HistoryGrowth) =>
    rows.push([
      name,
      String(lat?.n ?? '-'),
      String(lat?.p50 ?? '-'),
      String(lat?.p99 ?? '-'),
      String(hist?.bytesPerTurn ?? '-'),
      String(hist?.eventsPerTurn ?? '-'),
    ]);
  add('keel turn, fresh session', r.latency.keelTurn.latency, r.latency.keelTurn.history);
  add('bare Update + 1 activity', r.latency.baselineUpdate);
  add('bare workflow start + 1 activity', r.latency.baselineStart);
  add('keel turn, fresh session (beside the window)', r.window.fresh.latency, r.window.fresh.history);
  add(
    `keel turn, ${r.window.large.seed?.activeEntries.toLocaleString()}-entry / ${r.window.large.seed?.activeTokens.toLocaleString()}-token window`,
    r.window.large.latency,
    r.window.large.history,
  );
  add(
    `keel turn, ${r.scale.small.seed?.entries.toLocaleString()} entries`,
    r.scale.small.latency,
    r.scale.small.history,
  );
  add(
    `keel turn, ${r.scale.largeCompacted.seed?.entries.toLocaleString()} entries, compacted`,
    r.scale.largeCompacted.latency,
    r.scale.largeCompacted.history,
  );
  const u = r.scale.largeUncompacted;
  rows.push([
    `keel turn, ${u.entries.toLocaleString()} entries, uncompacted: first`,
    u.firstTurnMs === undefined ? '-' : '1',
    String(u.firstTurnMs ?? '-'),
    '-',
    '-',
    '-',
  ]);
  add(`keel turn, ${u.entries.toLocaleString()} entries, uncompacted: later`, u.latency);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const lines = rows.map((row) =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return [
    `turn latency (${r.setup.database}, ${r.setup.cpus} cpus, ${r.setup.model} model, ${r.setup.warmup} warm-up turns)`,
    ...lines,
    '',
    ...ratioLines(r),
  ].join('\n');
}

if (require.main === module) runMain('turn-latency', run, formatTable);
