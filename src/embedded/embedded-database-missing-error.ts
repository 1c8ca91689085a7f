/**
 * PGlite was needed (no DATABASE_URL) but is not installed: it is an optional dependency of
 * keel-agents. Declared apart from the loader, whose declarations name PGlite's own types, so the
 * `keel-agents/embedded` entry's declarations compile without them.
 */
export class EmbeddedDatabaseMissingError extends Error {
  override readonly name = 'EmbeddedDatabaseMissingError';
  constructor(
    readonly packageName: string,
    options?: ErrorOptions,
  ) {
    super(
      `the embedded database needs the package ${packageName}, which is not installed ` +
        `(it is an optional dependency of keel-agents): run \`npm install ${packageName}\`, ` +
        'or set DATABASE_URL to a PostgreSQL server',
      options,
    );
  }
}
