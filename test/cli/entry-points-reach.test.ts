/**
 * Every entry point fails the same way when a dependency is away: `keel dev`, `keel worker`, the worker
 * process (`npm run worker`) and `keel chat` each stop with exit code 1 and one line naming what they
 * could not reach, the address and the variable, without a driver's raw error. Two kinds of "away": a
 * port that refuses at once, and a server that accepts and never answers (the start must give up in
 * seconds rather than wait on a connection's own retries).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keel, runEntry, type Run } from '../support/keel-cli';

/** A TCP server that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as { port: number }).port,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((ok) => server.close(() => ok()));
    },
  };
}

/** Bounds a start that must give up by itself: far above the few seconds it takes, far below a retry loop's minutes. */
const GIVES_UP_WITHIN_MS = 60_000;

let home: string;
let silent: Awaited<ReturnType<typeof silentServer>>;
beforeAll(async () => {
  silent = await silentServer();
});
afterAll(async () => silent.close());
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'keel-reach-'));
});
afterEach(async () => rm(home, { recursive: true, force: true }));

const base = () => ({
  KEEL_HOME: home,
  KEEL_CONFIG: undefined,
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
  ANTHROPIC_API_KEY: 'k',
  TEMPORAL_ADDRESS: undefined,
  DATABASE_URL: undefined,
});

async function timed(run: () => Promise<Run>): Promise<Run & { ms: number }> {
  const t0 = Date.now();
  const r = await run();
  return { ...r, ms: Date.now() - t0 };
}

function expectOneLine(r: Run & { ms: number }, line: string): void {
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(line);
  // No driver's own words: the line says it all.
  expect(r.stderr).not.toMatch(/tonic::transport|ECONNREFUSED 127\.0\.0\.1:\d+\n|\n\s+at /);
  expect(r.ms).toBeLessThan(GIVES_UP_WITHIN_MS);
}

const entries: Array<[string, (env: Record<string, string | undefined>) => Promise<Run>]> = [
  ['keel dev', (env) => keel(['dev', '--check'], env)],
  ['keel worker', (env) => keel(['worker'], env)],
  ['npm run worker', (env) => runEntry('workers/main.ts', [], env)],
];

describe.each(entries)('%s', (_name, start) => {
  it('names an unreachable database (refused) with DATABASE_URL, without its password', async () => {
    const r = await timed(() =>
      start({ ...base(), DATABASE_URL: 'postgres://keel:secret@127.0.0.1:1/keel', TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    );
    expectOneLine(r, 'cannot reach the database at postgres://keel:***@127.0.0.1:1/keel (DATABASE_URL)');
    expect(r.stderr).not.toContain('secret');
    // The database is checked first: no Temporal dev server was started for nothing.
    expect(await readdir(home)).not.toContain('temporal.db');
  });

  it('names an unreachable Temporal (refused) with TEMPORAL_ADDRESS', async () => {
    const r = await timed(() => start({ ...base(), TEMPORAL_ADDRESS: '127.0.0.1:1' }));
    expectOneLine(r, 'cannot reach Temporal at 127.0.0.1:1 (TEMPORAL_ADDRESS)');
  });

  it('names a Temporal that never answers, after a few seconds', async () => {
    const r = await timed(() => start({ ...base(), TEMPORAL_ADDRESS: `127.0.0.1:${silent.port}` }));
    expectOneLine(r, `cannot reach Temporal at 127.0.0.1:${silent.port} (TEMPORAL_ADDRESS): no answer within 5 s`);
  });
});

describe('keel dev', () => {
  it('names a database that never answers, after a few seconds, before it starts a Temporal dev server', async () => {
    const r = await timed(() =>
      keel(['dev', '--check'], { ...base(), DATABASE_URL: `postgres://keel:keel@127.0.0.1:${silent.port}/keel` }),
    );
    expectOneLine(
      r,
      `cannot reach the database at postgres://keel:***@127.0.0.1:${silent.port}/keel (DATABASE_URL): no answer within 5 s`,
    );
    expect(await readdir(home)).not.toContain('temporal.db');
  });
});

describe('npm run worker', () => {
  it('reports a configuration file it cannot use in one line, not a stack', async () => {
    const r = await timed(() => runEntry('workers/main.ts', [], { ...base(), KEEL_CONFIG: join(home, 'none.json') }));
    expectOneLine(r, `KEEL_CONFIG: ${join(home, 'none.json')} does not exist`);
  });
});

describe('keel chat', () => {
  it('names an unreachable Temporal with TEMPORAL_ADDRESS', async () => {
    const r = await timed(() =>
      keel(['chat', 'agent:main:main'], { ...base(), TEMPORAL_ADDRESS: `127.0.0.1:${silent.port}` }, ''),
    );
    expectOneLine(r, `cannot reach Temporal at 127.0.0.1:${silent.port} (TEMPORAL_ADDRESS): no answer within 5 s`);
  });
});
