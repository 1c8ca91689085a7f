import { Client } from 'pg';

/** Test schemas older than this are left over from earlier runs (no run takes this long). */
const STALE_AFTER_MS = 6 * 60 * 60_000;
/** A setup spends at most this long dropping: a long backlog goes over several runs. */
const BUDGET_MS = 120_000;

/** A schema name for one test database: its creation time (base 36 ms), so later runs know its age. */
export function testSchemaName(random: string): string {
  return `keel_test_${Date.now().toString(36)}_${random}`;
}

/** Where a suite lists the schemas it made, for its test environment to drop when it ends. */
export const SUITE_SCHEMAS_KEY = '__keelTestSchemas';

export function recordSuiteSchema(schema: string): void {
  const g = globalThis as Record<string, unknown>;
  const list = (g[SUITE_SCHEMAS_KEY] ??= []) as string[];
  list.push(schema);
}

/**
 * Drops the named schemas (a suite's own, when it ends). A schema something still holds a lock in is
 * left for a later run's sweep rather than waited for. @returns how many were dropped.
 */
export async function dropTestSchemas(url: string, names: readonly string[]): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  let dropped = 0;
  try {
    await client.query(`set lock_timeout = '3s'`);
    for (const name of names) {
      if (!/^keel_test_[0-9a-z_]+$/.test(name)) throw new Error(`not a test schema: ${name}`);
      try {
        await client.query(`drop schema if exists "${name}" cascade`);
        dropped++;
      } catch {
        // Still in use (a process the suite left running): the next run's sweep drops it.
      }
    }
  } finally {
    await client.end();
  }
  return dropped;
}

/** When a test schema was made; 0 for names from before the time was in them (all leftovers). */
function createdAt(name: string): number | undefined {
  const timed = /^keel_test_([0-9a-z]+)_[0-9a-f]+$/.exec(name);
  if (timed) return parseInt(timed[1]!, 36);
  return /^keel_test_[0-9a-f]{12}$/.test(name) ? 0 : undefined;
}

/**
 * Drops the schemas earlier test runs left on the test server (each suite makes its own and never
 * drops it: a crashed run could not anyway). Without this, a machine that runs the tests often
 * collects thousands of schemas. Only schemas older than any run are dropped, so a run going on
 * beside this one keeps its own. @returns how many were dropped.
 */
export async function dropStaleTestSchemas(url: string, now = Date.now()): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  const started = Date.now();
  let dropped = 0;
  try {
    const { rows } = await client.query<{ name: string }>(
      `select nspname as name from pg_namespace where nspname like 'keel\\_test\\_%'`,
    );
    const stale = rows
      .map((r) => ({ name: r.name, at: createdAt(r.name) }))
      .filter((s): s is { name: string; at: number } => s.at !== undefined && now - s.at > STALE_AFTER_MS)
      .sort((a, b) => a.at - b.at);
    for (const s of stale) {
      if (Date.now() - started > BUDGET_MS) break;
      await client.query(`drop schema if exists "${s.name}" cascade`);
      dropped++;
    }
  } finally {
    await client.end();
  }
  return dropped;
}
