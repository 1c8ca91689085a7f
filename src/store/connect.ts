import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Pool, types as pgTypes } from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PGlitePool } from './pglite-pool';
import { migrateToLatest } from './migrations';
import type { Database } from './schema';
import { DEFAULTS } from '../config/defaults';

/** Where the data lives: a PostgreSQL URL, or a PGlite directory (`memory://` for a throwaway one). */
export type StoreTarget = { kind: 'postgres'; url: string; maxConnections?: number } | { kind: 'pglite'; dataDir: string };

/** An open store: the kysely handle plus how to close what it opened. */
export interface Store {
  readonly db: Kysely<Database>;
  readonly target: StoreTarget;
  /** The PGlite instance when embedded (tests use it to serve the same database over a socket). */
  readonly pglite?: PGlite;
  /** True when `select 1` answers within `timeoutMs` (default `databaseProbeTimeoutMs`); never throws. */
  healthy(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  readonly migrate?: boolean;
  /** Where pool errors are reported (default: one line on stderr). */
  readonly log?: (line: string) => void;
}

const INT8_OID = 20;

/** Opens the store and runs migrations. bigint columns are parsed to numbers (counters stay far below 2^53). */
export async function openStore(target: StoreTarget, opts: OpenStoreOptions = {}): Promise<Store> {
  const log = opts.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  let db: Kysely<Database>;
  let pglite: PGlite | undefined;
  if (target.kind === 'postgres') {
    const pool = new Pool({
      connectionString: target.url,
      max: target.maxConnections ?? 10,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8_OID ? (v: string) => Number(v) : pgTypes.getTypeParser(oid, format as 'text')) as typeof pgTypes.getTypeParser,
      },
    });
    // An idle client errors when the server restarts; without a listener that error kills the
    // process. The pool has already dropped the client and connects anew on the next checkout.
    pool.on('error', (err) => log(`keel store: idle database connection lost (${err.message}); reconnecting on next use`));
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  } else {
    if (!target.dataDir.startsWith('memory://')) mkdirSync(target.dataDir, { recursive: true });
    pglite = await PGlite.create(target.dataDir, {
      parsers: { [INT8_OID]: (v: string) => Number(v) },
    });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new PGlitePool(pglite) }) });
  }
  if (opts.migrate !== false) await migrateToLatest(db);
  const owned = pglite;
  return {
    db,
    target,
    pglite: owned,
    healthy: (timeoutMs = DEFAULTS.databaseProbeTimeoutMs) => probe(db, timeoutMs),
    async close() {
      await db.destroy();
      if (owned && !owned.closed) await owned.close();
    },
  };
}

async function probe(db: Kysely<Database>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
  });
  const answered = sql`select 1`.execute(db).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** `databaseUrl` when set, else PGlite under `<home>/db` (default `./.keel`). */
export function storeTargetFor(config: { readonly databaseUrl?: string; readonly home: string }): StoreTarget {
  return config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: resolve(config.home, 'db') };
}
