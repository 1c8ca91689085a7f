/**
 * A bench run as a script (`npx tsx bench/<name>.ts`): its summary on stderr, its result as one JSON
 * line on stdout (what `bench/run.ts` and the baselines read), exit code 1 when it fails.
 */
export function runMain<R>(
  name: string,
  run: () => Promise<R>,
  summary: (result: R) => string | readonly string[],
  opts: { readonly exitWhenDone?: boolean } = {},
): void {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const done = run()
    .then((result) => {
      const lines = summary(result);
      log(typeof lines === 'string' ? lines : lines.join('\n'));
      process.stdout.write(`${JSON.stringify(result)}\n`);
    })
    .catch((err: unknown) => {
      log(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exitCode = 1;
    });
  // A bench that leaves handles open (a fleet of workers) is ended once its result is written.
  if (opts.exitWhenDone) void done.finally(() => process.exit());
}
