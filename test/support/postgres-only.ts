import { sharedDatabases, type SharedDatabaseKind } from './shared-database';

/** The PostgreSQL server of TEST_DATABASE_URL, or undefined when it is unset. */
export const postgres: SharedDatabaseKind | undefined = sharedDatabases().find((k) => k.name === 'postgres');

/**
 * A suite that only PostgreSQL can run: skipped without TEST_DATABASE_URL. Pass `name` and `why` as
 * plain string literals: test/support/report-skips.ts reads them from the source to say, at the
 * start of `npm test`, which suites it skips and why.
 */
export function describeOnPostgres(name: string, why: string, fn: () => void): void {
  (postgres ? describe : describe.skip)(`${name} (PostgreSQL only: ${why})`, fn);
}
