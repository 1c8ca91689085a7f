/**
 * The console's fleet view at 10 and at 10,000 sessions: the server's answer to the one page the
 * view asks for (`GET /v1/console/sessions`, median of several), and the page's load event and first
 * table in headless Chromium (Debian's, as the browser tests use), each on a store seeded with that
 * many sessions. No Temporal: the fleet view reads the database alone.
 *
 *   npx ts-node --swc bench/console-fleet.ts      # BENCH_DATABASE_URL=postgres://… (else in-memory PGlite)
 */
import { sql } from 'kysely';
import { Connection } from '@temporalio/client';
import { chromium } from 'playwright-core';
import { openStore, type StoreTarget } from '../src/store/connect';
import { KeelClient } from '../src/client/keel-client';
import { configFromEnv } from '../src/config/keel-config';
import { serveApi } from '../src/api/serve-api';
import { temporalDependency } from '../src/runtime/reach';
import { storeDependency } from '../src/store/reachable-store';
import { consoleCookieValue } from '../src/console/console-cookie';
import { chromiumPath } from '../test/support/tool-path';
import { runMain } from './support/run-main';

const TOKEN = 'bench-token-0123456789abcdef';
const SERVER_SAMPLES = 7;

export interface ConsoleFleetRow {
  readonly sessions: number;
  /** Median ms of the server's answer to the fleet view's page. */
  readonly serverMs: number;
  /** ms from navigation to the page's load event, and to the first table drawn (null without Chromium). */
  readonly loadEventMs: number | null;
  readonly tableMs: number | null;
}

async function measure(sessions: number, quick: boolean): Promise<ConsoleFleetRow> {
  const url = process.env.BENCH_DATABASE_URL;
  const target: StoreTarget = url ? { kind: 'postgres', url } : { kind: 'pglite', dataDir: 'memory://' };
  const store = await openStore(target);
  const agent = `bench${sessions}x${Date.now().toString(36)}`;
  await sql`insert into sessions (agent_id, session_key, session_id, session_started_at, last_interaction_at, updated_at, toggles, context_tokens, compaction_count)
    select ${agent}, 'agent:' || ${agent} || ':s-' || i, ${agent} || '-' || i, now(), now(), now() - (i || ' seconds')::interval, '{}', (i * 37) % 200000, i % 7
    from generate_series(1, ${sessions}) as i`.execute(store.db);
  const defaults = configFromEnv({}, { allowedAgents: [agent] });
  // The fleet view never calls Temporal: a lazy connection that is never used.
  const client = new KeelClient({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
  const served = await serveApi(
    {
      client,
      db: store.db,
      settings: { defaults, agents: new Map() },
      dependencies: { temporal: temporalDependency('127.0.0.1:1'), database: storeDependency(target) },
      token: TOKEN,
    },
    { host: '127.0.0.1', port: 0 },
  );
  try {
    const samples: number[] = [];
    for (let i = 0; i < (quick ? 3 : SERVER_SAMPLES); i++) {
      const started = performance.now();
      const res = await fetch(`${served.url}/v1/console/sessions?page=1&pageSize=50&sort=updated`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      await res.json();
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    const serverMs = Math.round(samples[Math.floor(samples.length / 2)]! * 10) / 10;
    const executablePath = chromiumPath();
    if (!executablePath) return { sessions, serverMs, loadEventMs: null, tableMs: null };
    const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
    try {
      const context = await browser.newContext();
      await context.addCookies([{ name: 'keel_console', value: consoleCookieValue(TOKEN), url: served.url }]);
      const page = await context.newPage();
      const started = performance.now();
      await page.goto(`${served.url}/`, { waitUntil: 'load' });
      const loadEventMs = Math.round(performance.now() - started);
      await page.waitForSelector('#sessions tbody tr');
      const tableMs = Math.round(performance.now() - started);
      return { sessions, serverMs, loadEventMs, tableMs };
    } finally {
      await browser.close();
    }
  } finally {
    await served.close();
    await store.close();
  }
}

/** The fleet view at 10 and at 10,000 sessions (`quick`: 1,000). */
export async function run(opts: { quick?: boolean } = {}): Promise<{ rows: ConsoleFleetRow[] }> {
  const rows = [
    await measure(10, Boolean(opts.quick)),
    await measure(opts.quick ? 1_000 : 10_000, Boolean(opts.quick)),
  ];
  return { rows };
}

/** One line per fleet size. */
export function ratioLines(result: unknown): string[] {
  return (result as { rows: ConsoleFleetRow[] }).rows.map(
    (r) =>
      `console fleet view, ${r.sessions} sessions: server ${r.serverMs} ms, load event ${r.loadEventMs ?? '—'} ms, table ${r.tableMs ?? '—'} ms`,
  );
}

if (require.main === module) runMain('console-fleet', run, ratioLines);
