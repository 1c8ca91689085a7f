/** Latency summary of one measured series, in milliseconds. */
export interface LatencyStats {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/** Nearest-rank percentile (`p` in 0..100) of an already sorted array. */
function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Rounds to 0.1 ms: finer digits are noise on a shared 2-core machine. */
export function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** Summarizes samples; throws on an empty series, which means a bench measured nothing. */
export function latencyStats(samples: readonly number[]): LatencyStats {
  if (samples.length === 0) throw new Error('latencyStats: no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / sorted.length;
  return {
    n: sorted.length,
    p50: round1(percentile(sorted, 50)),
    p99: round1(percentile(sorted, 99)),
    mean: round1(mean),
    min: round1(sorted[0]!),
    max: round1(sorted[sorted.length - 1]!),
  };
}

/** a / b to two decimals (null when b is 0, so a ratio is never Infinity in JSON). */
export function ratio(a: number, b: number): number | null {
  return b === 0 ? null : Math.round((a / b) * 100) / 100;
}

/**
 * Runs `op` `warmup` times untimed, then `n` times sequentially, timing each call.
 * Stops early (returning what it has) once `budgetMs` of timed work is spent.
 */
export async function timeSequential(
  op: (i: number) => Promise<unknown>,
  n: number,
  warmup: number,
  budgetMs = Infinity,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await op(i);
  const samples: number[] = [];
  const began = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const { bookkeepingMs } = outsideOf(await op(warmup + i));
    samples.push(performance.now() - t0 - bookkeepingMs);
    if (performance.now() - began > budgetMs) break;
  }
  return samples;
}

/** Samples of one interleaved series: as timed, and less the time the op said was not its own. */
export interface InterleavedSamples {
  readonly timed: number[];
  /** `timed` less each call's reported outside time (e.g. the fake model's own work); equal to it when none was reported. */
  readonly own: number[];
}

/**
 * What an op resolves to when part of its call was not its own: the milliseconds to take out of
 * `own` (a stand-in's work during the call), and those the bench spent after the call on its own
 * bookkeeping (asking the stand-in about it), taken out of both measures.
 */
export interface OutsideTime {
  readonly outsideMs: number;
  readonly bookkeepingMs?: number;
}

function outsideOf(value: unknown): { outsideMs: number; bookkeepingMs: number } {
  const reported = typeof value === 'object' && value !== null ? (value as Partial<OutsideTime>) : {};
  return { outsideMs: reported.outsideMs ?? 0, bookkeepingMs: reported.bookkeepingMs ?? 0 };
}

/**
 * Runs several series round-robin (op 0, op 1, …, op 0, op 1, …) so that load from anything else on
 * the machine falls on every series alike and their ratios stay fair. An op may resolve to an
 * `OutsideTime` (a stand-in's own work during the call), kept apart in `own`.
 */
export async function timeInterleaved(
  ops: ReadonlyArray<(i: number) => Promise<unknown>>,
  n: number,
  warmup: number,
): Promise<InterleavedSamples[]> {
  for (let i = 0; i < warmup; i++) for (const op of ops) await op(i);
  const series = ops.map((): InterleavedSamples => ({ timed: [], own: [] }));
  for (let i = 0; i < n; i++) {
    for (const [k, op] of ops.entries()) {
      const t0 = performance.now();
      const { outsideMs, bookkeepingMs } = outsideOf(await op(warmup + i));
      const ms = performance.now() - t0 - bookkeepingMs;
      series[k]!.timed.push(ms);
      series[k]!.own.push(ms - outsideMs);
    }
  }
  return series;
}
