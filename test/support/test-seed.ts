/**
 * The seed of a randomized test: `variable` from the environment when set (to replay a failure),
 * the clock otherwise. Printed, so any failing run can be repeated with that seed.
 */
export function announcedSeed(variable: string, what: string): number {
  const seed = Number(process.env[variable] ?? Date.now() % 2 ** 31);
  process.stdout.write(`${what} seed: ${seed} (${variable}=${seed} to repeat)\n`);
  return seed;
}
