/**
 * `npm run bench [-- <name>…]`: runs every bench in bench/ that exports `run()`, one after the other,
 * prints each one's ratio lines on stderr, writes every result to bench/out/results.json and prints
 * a summary object on stdout. Exit code 1 only when a bench throws (a slow number is not a failure).
 *
 *   npm run bench              # all benches
 *   npm run bench -- turn      # benches whose file name contains "turn"
 *   npm run bench -- --quick   # every bench with smaller counts (under 3 minutes on 2 cores)
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** What the runner needs from a bench module: `run()`, and optionally its own headline lines. */
interface BenchModule {
  /** `quick`: smaller counts, so the whole run fits in a few minutes (the ratios stay comparable). */
  run(opts?: { quick?: boolean }): unknown;
  ratioLines?(result: unknown): string[];
}

/** One bench's outcome in results.json. */
export interface BenchOutcome {
  readonly name: string;
  readonly ok: boolean;
  readonly seconds: number;
  readonly lines: string[];
  readonly result?: unknown;
  readonly error?: string;
}

const BENCH_DIR = __dirname;
const OUT_FILE = join(BENCH_DIR, 'out', 'results.json');
/** Files in bench/ that are not benches. */
const NOT_BENCHES = new Set(['run.ts']);

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Bench file names (without .ts) in bench/, sorted, filtered by the command-line words when given. */
export function benchNames(filters: readonly string[]): string[] {
  const names = readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !NOT_BENCHES.has(f))
    .map((f) => basename(f, '.ts'))
    .sort();
  return filters.length === 0 ? names : names.filter((n) => filters.some((w) => n.includes(w)));
}

/**
 * Lines to print for a result: the bench's own `ratioLines` when it has them, else every numeric
 * field named like a ratio or speedup (the comparisons a bench is for), else a pointer to the file.
 */
export function headline(mod: BenchModule, result: unknown): string[] {
  if (mod.ratioLines) return mod.ratioLines(result);
  const found: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`));
    else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    else if (typeof value === 'number' && /ratio|speedup/i.test(path.split('.').pop() ?? ''))
      found.push(`${path} = ${value}`);
  };
  walk(result, '');
  return found.length > 0 ? found : ['(no ratio fields; see bench/out/results.json)'];
}

async function runOne(name: string, quick: boolean): Promise<BenchOutcome> {
  const began = performance.now();
  const seconds = () => Math.round((performance.now() - began) / 100) / 10;
  try {
    const mod = (await import(join(BENCH_DIR, name))) as Partial<BenchModule>;
    if (typeof mod.run !== 'function') return { name, ok: true, seconds: 0, lines: ['(no run() export; skipped)'] };
    const result = await mod.run(quick ? { quick: true } : {});
    return { name, ok: true, seconds: seconds(), lines: headline(mod as BenchModule, result), result };
  } catch (err) {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    return {
      name,
      ok: false,
      seconds: seconds(),
      lines: [`FAILED: ${err instanceof Error ? err.message : String(err)}`],
      error,
    };
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const names = benchNames(args.filter((a) => a !== '--quick'));
  if (names.length === 0) {
    log(`no bench matches ${process.argv.slice(2).join(' ')}; benches: ${benchNames([]).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const outcomes: BenchOutcome[] = [];
  for (const name of names) {
    log(`── ${name}`);
    const outcome = await runOne(name, quick);
    outcomes.push(outcome);
    for (const line of outcome.lines) log(`   ${name}: ${line}`);
    log(`   ${name}: ${outcome.ok ? 'done' : 'failed'} in ${outcome.seconds} s`);
  }
  mkdirSync(join(BENCH_DIR, 'out'), { recursive: true });
  writeFileSync(
    OUT_FILE,
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, quick, benches: outcomes }, null, 2)}\n`,
  );
  log(`\nresults: ${OUT_FILE}`);
  for (const o of outcomes) log(`${o.ok ? 'ok  ' : 'FAIL'} ${o.name} (${o.seconds} s)${o.ok ? '' : `\n${o.error}`}`);
  process.stdout.write(
    `${JSON.stringify(outcomes.map(({ name, ok, seconds, lines }) => ({ name, ok, seconds, lines })))}\n`,
  );
  if (outcomes.some((o) => !o.ok)) process.exitCode = 1;
}

if (require.main === module) {
  main()
    .catch((err: unknown) => {
      log(`bench runner failed: ${String(err)}`);
      process.exitCode = 1;
    })
    // A bench that leaves a handle open must not keep the runner alive after its results are written.
    .finally(() => process.exit());
}
