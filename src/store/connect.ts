import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { Kysely, sql } from 'kysely';
import { CurrentSchemaPostgresDialect } from './current-schema-dialect';
import { Pool, types as pgTypes } from 'pg';
import { PGlitePool } from '../embedded/pglite-pool';
import type { EmbeddedPglite } from '../embedded/embedded-pglite';
import { loadPglite } from '../embedded/load-pglite';
import { PreparingClient } from './prepared-statements';
import { SessionLock } from '../embedded/session-lock';
import { unusableFolderError } from '../embedded/unusable-folder';
import { claimPgliteFolder } from '../embedded/folder-owner';
import { runningStack } from '../embedded/stack-state';
import { migrateToLatest } from './migrations';
import { databaseAnswers } from './database-answers';
import type { Database } from './schema';
import { DEFAULTS } from '../config/defaults';
import { keyRingFor, type KeelConfig } from '../config/keel-config';
import { atRestPlugin, type AtRestOptions } from '../security/at-rest';

/**
 * Where the data lives: a PostgreSQL URL, or a PGlite directory (`memory://` for a throwaway one).
 * `servedBy` marks the URL of a running embedded stack's PGlite (found through its state file).
 */
export type StoreTarget =
  | {
      kind: 'postgres';
      url: string;
      maxConnections?: number;
      /** Prepare the statements every turn runs once per connection (default true; off for PgBouncer < 1.21 in transaction mode). */
      preparedStatements?: boolean;
      servedBy?: { pid: number; dataDir?: string };
    }
  | {
      kind: 'pglite';
      dataDir: string;
      /** Start from this dump of a data folder (PGlite's dumpDataDir) instead of running initdb: tests open hundreds of empty stores. */
      loadDataDir?: Blob;
    };

/** An open store: the kysely handle plus how to close what it opened. */
export interface Store {
  readonly db: Kysely<Database>;
  readonly target: StoreTarget;
  /** The PGlite instance when embedded (tests use it to serve the same database over a socket). */
  readonly pglite?: EmbeddedPglite | undefined;
  /** Taken by whoever uses the PGlite session: the store's own pool, socket clients, listeners. */
  readonly pgliteLock?: SessionLock | undefined;
  /** True when `select 1` answers within `timeoutMs` (default `databaseProbeTimeoutMs`); never throws. */
  healthy(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  readonly migrate?: boolean;
  /** Where pool errors are reported (default: one line on stderr). */
  readonly log?: (line: string) => void;
  /** Encryption at rest (`atRestFor(config)`); unset → writes plain, and a sealed value fails to read naming the fix. */
  readonly atRest?: AtRestOptions;
  /** Give up connecting to PostgreSQL after this long (a running stack's socket: 5 s). Migrations are not timed: they may wait on another process's migration lock. */
  readonly connectTimeoutMs?: number;
}

const INT8_OID = 20;

/** Opens the store and runs migrations. bigint columns are parsed to numbers (counters stay far below 2^53). */
export async function openStore(target: StoreTarget, opts: OpenStoreOptions = {}): Promise<Store> {
  const log = opts.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  let db: Kysely<Database>;
  let pglite: EmbeddedPglite | undefined;
  let pgliteLock: SessionLock | undefined;
  let releaseFolder = () => {};
  const plugins = [atRestPlugin(opts.atRest ?? { seal: false })];
  if (target.kind === 'postgres') {
    const pool = new Pool({
      connectionString: target.url,
      // The statements every turn runs are prepared once per connection (see PreparingClient); not
      // through a dev stack's PGlite socket, which serves every connection from one backend session:
      // what each short-lived CLI command prepared there would outlive it for the stack's lifetime.
      ...(target.preparedStatements === false || target.servedBy ? {} : { Client: PreparingClient }),
      max: target.maxConnections ?? 10,
      // A running stack's socket answers at once or not at all; do not hang on it.
      ...(opts.connectTimeoutMs !== undefined || target.servedBy
        ? { connectionTimeoutMillis: opts.connectTimeoutMs ?? 5_000 }
        : {}),
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8_OID
            ? (v: string) => Number(v)
            : pgTypes.getTypeParser(oid, format as 'text')) as typeof pgTypes.getTypeParser,
      },
    });
    // An idle client errors when the server restarts; without a listener that error kills the
    // process. The pool has already dropped the client and connects anew on the next checkout.
    pool.on('error', (err) =>
      log(`keel store: idle database connection lost (${err.message}); reconnecting on next use`),
    );
    // A checked-out client whose socket fails between queries emits 'error' too, and the pool
    // listens only while it is idle: without this the error kills the process (the next query on
    // that client fails and the pool drops it).
    pool.on('connect', (client) => client.on('error', () => undefined));
    db = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }), plugins });
  } else {
    if (!target.dataDir.startsWith('memory://')) {
      const dataDir = resolve(target.dataDir);
      try {
        mkdirSync(dataDir, { recursive: true });
        // The only place a PGlite folder is opened: a second process would keep its own copy of the pages.
        releaseFolder = claimPgliteFolder(dataDir);
      } catch (err) {
        throw (
          unusableFolderError(err, {
            path: dataDir,
            holds: 'the embedded database',
            fix: 'set KEEL_HOME to a folder this process can write, or DATABASE_URL to a PostgreSQL server',
          }) ?? err
        );
      }
    }
    try {
      const { PGlite } = await loadPglite();
      pglite = await PGlite.create(target.dataDir, {
        parsers: { [INT8_OID]: (v: string) => Number(v) },
        ...(target.loadDataDir ? { loadDataDir: target.loadDataDir } : {}),
      });
    } catch (err) {
      releaseFolder();
      throw err;
    }
    pgliteLock = new SessionLock();
    db = new Kysely<Database>({
      dialect: new CurrentSchemaPostgresDialect({ pool: new PGlitePool(pglite, pgliteLock) }),
      plugins,
    });
  }
  const owned = pglite;
  const close = async () => {
    await db.destroy();
    if (owned && !owned.closed) await owned.close();
    releaseFolder();
  };
  try {
    if (target.kind === 'postgres' && target.servedBy) await reachEmbedded(db, target.url, target.servedBy);
    if (opts.migrate !== false) await migrateToLatest(db);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    db,
    target,
    pglite: owned,
    ...(pgliteLock ? { pgliteLock } : {}),
    healthy: (timeoutMs = DEFAULTS.databaseProbeTimeoutMs) => databaseAnswers(db, timeoutMs),
    close,
  };
}

/** A running stack owns the PGlite folder: through its socket or not at all. */
async function reachEmbedded(
  db: Kysely<Database>,
  url: string,
  owner: { pid: number; dataDir?: string },
): Promise<void> {
  try {
    await sql`select 1`.execute(db);
  } catch (err) {
    const where = url.replace(/\/\/[^@]*@/, '//');
    throw new Error(
      `the embedded stack in process ${owner.pid} owns ${owner.dataDir ?? 'the PGlite folder'}, but its database at ${where} does not answer ` +
        `(${err instanceof Error ? err.message : String(err)}); PGlite cannot be opened by a second process. Wait for it, or stop process ${owner.pid} and retry.`,
      { cause: err },
    );
  }
}

/**
 * `databaseUrl` when set; else the database a running embedded stack serves (`<home>/stack.json`);
 * else PGlite under `<home>/db` (default `./.keel`), opened in this process.
 */
export function storeTargetFor(config: {
  readonly databaseUrl?: string | undefined;
  readonly home: string;
  readonly databasePoolSize?: number | undefined;
  readonly databasePreparedStatements?: boolean | undefined;
}): StoreTarget {
  if (config.databaseUrl) {
    return {
      kind: 'postgres',
      url: config.databaseUrl,
      ...(config.databasePoolSize ? { maxConnections: config.databasePoolSize } : {}),
      ...(config.databasePreparedStatements === false ? { preparedStatements: false } : {}),
    };
  }
  const stack = runningStack(config.home);
  if (stack?.databaseUrl)
    return {
      kind: 'postgres',
      url: stack.databaseUrl,
      maxConnections: 4,
      servedBy: { pid: stack.pid, ...(stack.dataDir ? { dataDir: stack.dataDir } : {}) },
    };
  return { kind: 'pglite', dataDir: resolve(config.home, 'db') };
}

/** The store's at-rest settings from the configuration: the key ring (to read sealed rows) and whether to seal writes. */
export function atRestFor(
  config: Pick<KeelConfig, 'encryptionKeys' | 'encryptionKeyId' | 'encryptAtRest'>,
): AtRestOptions {
  const ring = keyRingFor(config);
  return ring ? { ring, seal: config.encryptAtRest } : { seal: false };
}
