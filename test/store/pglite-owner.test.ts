import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { Client } from 'pg';
import { openStore, type Store } from '../../src/store/connect';
import { servePglite, type ServedPglite } from '../../src/embedded/pglite-server';
import { readSessionForTurn } from '../../src/store/turn-begin-read';
import { PgliteReplyStreamSubscriber } from '../../src/embedded/pglite-reply-subscriber';

/**
 * The process that owns a PGlite folder uses it in-process (the worker's pool) and serves it to
 * other processes over a socket; PGlite is one database session, so the two must take turns by
 * whole units of work (a transaction, an extended-protocol exchange), never interleave.
 */
describe('one PGlite folder served to other processes', () => {
  let dataDir: string;
  let store: Store;
  let served: ServedPglite;
  const clients: Client[] = [];
  const connect = async () => {
    const client = new Client({ connectionString: served.url });
    await client.connect();
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'keel-owner-')), 'db');
    store = await openStore({ kind: 'pglite', dataDir });
    served = await servePglite(store.pglite!, store.pgliteLock!);
    await sql`create table scratch (x int)`.execute(store.db);
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => {});
    await served.close();
    await store.close();
  });

  it('an in-process query waits for a socket client’s open transaction instead of reading inside it', async () => {
    const other = await connect();
    await other.query('BEGIN');
    await other.query('INSERT INTO scratch VALUES (1)');
    // Issued while the other process's transaction is open; it must not see (or join) it.
    const counted = sql<{ n: number }>`select count(*)::int as n from scratch`.execute(store.db);
    await other.query('ROLLBACK');
    expect((await counted).rows[0]!.n).toBe(0);
  });

  it('a socket client waits for an in-process transaction instead of reading inside it', async () => {
    const other = await connect();
    let counted: Promise<{ rows: Array<{ n: number }> }> | undefined;
    await store.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into scratch values (1)`.execute(trx);
        counted = other.query<{ n: number }>('select count(*)::int as n from scratch');
        // Give the socket query every chance to run now (it must not).
        await new Promise((resolve) => setTimeout(resolve, 200));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect((await counted!).rows[0]!.n).toBe(0);
  });

  it('parameterized queries of several clients never cross (each Parse…Sync exchange runs whole)', async () => {
    const [a, b, c] = [await connect(), await connect(), await connect()];
    const run = async (client: Client, tag: number) => {
      const diffs: number[] = [];
      for (let i = 0; i < 30; i++)
        diffs.push(
          (await client.query<{ v: number }>('select $1::int as v', [tag * 1000 + i])).rows[0]!.v - (tag * 1000 + i),
        );
      return diffs;
    };
    const diffs = (
      await Promise.all([
        run(a, 1),
        run(b, 2),
        run(c, 3),
        Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            sql<{ v: number }>`select ${i}::int as v`.execute(store.db).then((r) => r.rows[0]!.v - i),
          ),
        ),
      ])
    ).flat();
    expect(diffs.every((d) => d === 0)).toBe(true);
  });

  it('two processes reaching it through the socket run the same hot statement without colliding on a prepared name', async () => {
    // The socket serves one backend session, where a statement two clients prepared under one name
    // would exist twice. A CLI command that found the stack (storeTargetFor) prepares nothing.
    const target = { kind: 'postgres' as const, url: served.url, servedBy: { pid: process.pid } };
    // And by URL alone, as workers given DATABASE_URL do: each prepares its own, under its own names.
    const byUrl = { kind: 'postgres' as const, url: served.url };
    const stores = [
      await openStore(target, { migrate: false }),
      await openStore(byUrl, { migrate: false }),
      await openStore(byUrl, { migrate: false }),
    ];
    try {
      const read = async (s: Store) =>
        readSessionForTurn(s.db, {
          agentId: 'a',
          sessionKey: 'agent:a:main',
          defaultModel: 'm',
          releaseToolArgsBefore: new Date().toISOString(),
        });
      for (const s of stores) expect(await read(s)).toBeUndefined();
      expect(await Promise.all([...stores, ...stores].map(read))).toEqual(Array(6).fill(undefined));
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it('a client that disconnects inside a transaction leaves nothing behind: its transaction is rolled back', async () => {
    const other = await connect();
    await other.query('BEGIN');
    await other.query('INSERT INTO scratch VALUES (1)');
    await other.end();
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from scratch`.execute(store.db);
    expect(rows[0]!.n).toBe(0);
    expect(store.pglite!.isInTransaction()).toBe(false);
  });

  it('in-process LISTEN keeps hearing in-process NOTIFY while socket clients come and go', async () => {
    const heard: string[] = [];
    const stop = await new PgliteReplyStreamSubscriber(store.pglite!, store.pgliteLock!).listen(
      'keel_owner_test',
      (p) => heard.push(p),
    );
    const other = await connect();
    await other.query('INSERT INTO scratch VALUES (1)');
    await sql`select pg_notify('keel_owner_test', 'chunk')`.execute(store.db);
    await stop();
    expect(heard).toEqual(['chunk']);
  });

  it('a second open of the folder in this process is refused, naming the folder', async () => {
    await expect(openStore({ kind: 'pglite', dataDir })).rejects.toThrow(
      `the PGlite folder ${dataDir} is already open in this process`,
    );
  });
});

describe('a stale owner taken over by racing processes', () => {
  const root = resolve(__dirname, '../..');
  // Each child claims the folder when the go file appears, prints the outcome, and holds its claim until stdin ends.
  // Every read of the owner file takes 300 ms, so all of them read the stale owner before any acts on it.
  const script = `
    const fs = require('node:fs');
    const read = fs.readFileSync;
    fs.readFileSync = function (file, ...rest) {
      const text = read.call(this, file, ...rest);
      if (String(file).endsWith('.owner')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      return text;
    };
    const { claimPgliteFolder } = require('./src/embedded/folder-owner');
    const [dataDir, go] = process.argv.slice(1);
    process.stdout.write('ready\\n');
    while (!fs.existsSync(go)) {}
    let outcome;
    try { claimPgliteFolder(dataDir); outcome = 'claimed'; } catch (err) { outcome = err.name + ': ' + err.message; }
    process.stdout.write(outcome + '\\n');
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
  `;
  const child = (dataDir: string, go: string) => {
    const proc = spawn(process.execPath, ['-r', 'ts-node/register', '-e', script, dataDir, go], {
      cwd: root,
      env: { ...process.env, TS_NODE_SWC: 'true', TS_NODE_TRANSPILE_ONLY: 'true' },
    });
    let out = '';
    const waiting: Array<() => void> = [];
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const check of waiting) check();
    });
    const lines = (n: number) =>
      new Promise<string[]>((resolveLines, reject) => {
        const check = () => {
          const got = out.split('\n').filter(Boolean);
          if (got.length >= n) resolveLines(got);
        };
        waiting.push(check);
        proc.on('exit', (code) => reject(new Error(`child exited (${code}) before ${n} lines: ${out}`)));
        check();
      });
    return { proc, ready: lines(1), outcome: lines(2).then((l) => l[1]!) };
  };

  it('exactly one of four takes the folder over; the others are told it is open in a live process', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keel-takeover-'));
    const dataDir = join(dir, 'db');
    const go = join(dir, 'go');
    const dead = await new Promise<number>((resolveDead) => {
      const p = spawn(process.execPath, ['-e', '']);
      p.on('exit', () => resolveDead(p.pid!));
    });
    await writeFile(`${dataDir}.owner`, JSON.stringify({ pid: dead, since: 'earlier' }));
    const children = Array.from({ length: 4 }, () => child(dataDir, go));
    try {
      await Promise.all(children.map((c) => c.ready));
      await writeFile(go, '');
      const outcomes = await Promise.all(children.map((c) => c.outcome));
      const winners = children.filter((_, i) => outcomes[i] === 'claimed');
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.proc.pid!;
      for (const o of outcomes.filter((o) => o !== 'claimed'))
        expect(o).toMatch(new RegExp(`^FolderInUseError: the PGlite folder ${dataDir} is open in process ${winner} `));
      expect(JSON.parse(readFileSync(`${dataDir}.owner`, 'utf8')).pid).toBe(winner);
    } finally {
      for (const c of children) c.proc.stdin.end();
    }
    // Nothing is left behind but the owner file: no takeover lock, no file written aside.
    await Promise.all(
      children.map((c) => new Promise((r) => (c.proc.exitCode === null ? c.proc.on('exit', r) : r(undefined)))),
    );
    expect((await readdir(dir)).sort()).toEqual(['db.owner', 'go']);
  });
});
