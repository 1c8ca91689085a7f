/**
 * The embedded database's packages are optional dependencies of keel-agents: a client, or a worker
 * on a PostgreSQL server (DATABASE_URL), runs without them. They are loaded only when a store is
 * opened on PGlite (or served over a socket), and their absence is said in one line naming the fix.
 */
import { EmbeddedDatabaseMissingError } from './embedded-database-missing-error';

/** `@electric-sql/pglite`, or EmbeddedDatabaseMissingError when it is not installed. */
export function loadPglite(): Promise<typeof import('@electric-sql/pglite')> {
  return importEmbeddedPackage('@electric-sql/pglite', () => import('@electric-sql/pglite'));
}

/** `@electric-sql/pglite-socket` (serving PGlite to other processes), or EmbeddedDatabaseMissingError. */
export function loadPgliteSocket(): Promise<typeof import('@electric-sql/pglite-socket')> {
  return importEmbeddedPackage('@electric-sql/pglite-socket', () => import('@electric-sql/pglite-socket'));
}

/**
 * Runs `load`; a failure to find `packageName` itself becomes EmbeddedDatabaseMissingError, any other
 * failure (a broken install, a module of its own that is missing) is rethrown as it is.
 */
export async function importEmbeddedPackage<T>(packageName: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    // Read by shape, not instanceof: a loader's error may come from another realm (a vm context).
    const { code, message } = (err ?? {}) as Partial<NodeJS.ErrnoException>;
    const notFound = code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND';
    if (notFound && message?.includes(`'${packageName}'`))
      throw new EmbeddedDatabaseMissingError(packageName, { cause: err });
    throw err;
  }
}
