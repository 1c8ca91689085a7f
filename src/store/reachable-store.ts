import { openStore, type OpenStoreOptions, type Store, type StoreTarget } from './connect';
import { databaseDependency, probeTemporal, REACH_TIMEOUT_MS, unreachable, type Dependency } from '../runtime/reach';
import type { TemporalConnectionOptions } from '../temporal/connection-options';

/** The database a store opened: the PostgreSQL server, or the PGlite folder under KEEL_HOME. */
export function storeDependency(target: StoreTarget): Dependency {
  if (target.kind === 'postgres') return databaseDependency(target.url);
  return {
    name: 'the database',
    address: target.dataDir,
    variable: 'KEEL_HOME',
    fix: 'check that the PGlite folder is readable and not held by another process',
  };
}

/**
 * Opens the store at `target`. For a PostgreSQL server only the connection is timed (the migrations
 * after it may wait on another process's lock, which is a wait, not an unreachable database); a
 * failure is the one-line error naming DATABASE_URL.
 */
export async function openReachableStore(target: StoreTarget, opts: OpenStoreOptions = {}): Promise<Store> {
  if (target.kind !== 'postgres') return openStore(target, opts);
  try {
    return await openStore(target, { ...opts, connectTimeoutMs: REACH_TIMEOUT_MS });
  } catch (err) {
    throw unreachable(databaseDependency(target.url), err);
  }
}

/**
 * Opens the store while checking that Temporal answers (when one is configured), both at once:
 * whichever fails first is reported, so neither waits on the other to say it is away.
 */
export async function openStoreBesideTemporal(
  target: StoreTarget,
  opts: OpenStoreOptions,
  temporal: TemporalConnectionOptions | undefined,
): Promise<Store> {
  const opening = openReachableStore(target, opts);
  try {
    await Promise.all([opening, temporal === undefined ? undefined : probeTemporal(temporal)]);
  } catch (err) {
    // A store that opens after Temporal failed is closed again.
    void opening.then(
      (store) => store.close(),
      () => undefined,
    );
    throw err;
  }
  return opening;
}
