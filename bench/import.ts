/**
 * Import throughput: `importSessions` over a generated corpus, next to a bare `JSON.parse` line loop
 * over the same files in the same run (the floor any importer pays), and next to the database's own
 * floor: the same rows inserted again by one `INSERT … SELECT` inside the database (each payload
 * parsed from text to jsonb, every index kept), with no client, protocol or parsing in this process.
 * The import and the loop are each timed as the fastest of three runs; the first import is reported too.
 * Standalone:
 * `npx ts-node --swc bench/import.ts [sessions] [entriesPerSession]`; `BENCH_DATABASE_URL` (or
 * `DATABASE_URL`) selects PostgreSQL, else a throwaway PGlite. Numbers on stdout as JSON; people-text on stderr.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { openStore, type StoreTarget } from '../src/store/connect';
import { importSessions, type ImportSessionsReport } from '../src/transfer/import-sessions';
import { writeCorpus } from '../test/fixtures/generate';

export interface ImportBenchResult {
  database: StoreTarget['kind'];
  files: number;
  entries: number;
  megabytes: number;
  /** The fastest of three imports, as the parse loop is timed: a migration of many files runs warm. */
  importSeconds: number;
  /** The first of them: one process importing once, paying for its warm-up (code, connections). */
  importFirstSeconds: number;
  importMBps: number;
  parseSeconds: number;
  parseMBps: number;
  /** How many times slower the import is than parsing alone. */
  ratio: number;
  /** The database inserting the same rows from its own copy of them (one statement, no client). */
  databaseSeconds: number;
  /** The database's floor over the parse loop: no importer writing these rows can beat it. */
  databaseRatio: number;
}

async function parseOnly(files: readonly string[]): Promise<number> {
  let lines = 0;
  for (const file of files) {
    for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
      if (line.length > 0) {
        JSON.parse(line);
        lines += 1;
      }
    }
  }
  return lines;
}

/** Generates the corpus, times both loops, cleans up. */
export async function run(
  opts: { sessions?: number; entriesPerSession?: number; target?: StoreTarget; quick?: boolean } = {},
): Promise<ImportBenchResult> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-bench-import-'));
  // BENCH_DATABASE_URL like every other bench (the runner's PostgreSQL); DATABASE_URL when run alone.
  const url = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  const target: StoreTarget =
    opts.target ?? (url ? { kind: 'postgres', url } : { kind: 'pglite', dataDir: 'memory://' });
  const store = await openStore(target);
  try {
    const corpus = await writeCorpus(dir, {
      sessions: opts.sessions ?? (opts.quick ? 50 : 200),
      entriesPerSession: opts.entriesPerSession ?? 200,
      seed: 42,
    });
    const mb = corpus.bytes / 1e6;

    // The loop's own speed: the fastest of three (the first pays for warming up the line reader).
    let parseSeconds = Infinity;
    for (let i = 0; i < 3; i++) {
      const began = performance.now();
      await parseOnly(corpus.files);
      parseSeconds = Math.min(parseSeconds, (performance.now() - began) / 1000);
    }

    // Timed like the parse loop, the fastest of three. Each run is a fresh agent, or it would time a
    // re-import (nothing inserted); on PostgreSQL a run's rows go before the next (the last run's are copied below).
    const timedImport = async (i: number) => {
      const agentId = `bench-${Date.now().toString(36)}-${i}`;
      const began = performance.now();
      const report = await importSessions({ db: store.db, agentId, dir, rewriteRepaired: false });
      const seconds = (performance.now() - began) / 1000;
      expectWholeImport(report.totals, corpus.files.length);
      return { agentId, report, seconds };
    };
    const runs = [await timedImport(0)];
    for (let i = 1; i < 3; i++) {
      if (target.kind === 'postgres')
        await store.db
          .deleteFrom('transcript_entries')
          .where('agent_id', '=', runs[i - 1]!.agentId)
          .execute();
      runs.push(await timedImport(i));
    }
    const importSeconds = Math.min(...runs.map((r) => r.seconds));
    const { agentId, report } = runs[runs.length - 1]!;

    const copyId = `${agentId}-db`;
    const t = performance.now();
    await sql`insert into transcript_entries (agent_id, session_id, id, parent_id, type, role, payload, token_estimate, byte_size, created_at)
      select ${copyId}, session_id, id, parent_id, type, role, payload::text::jsonb, token_estimate, byte_size, created_at
      from transcript_entries where agent_id = ${agentId}`.execute(store.db);
    const databaseSeconds = (performance.now() - t) / 1000;
    // Bench rows in a kept PostgreSQL database are removed; PGlite in memory goes away with the store.
    if (target.kind === 'postgres')
      await store.db.deleteFrom('transcript_entries').where('agent_id', 'in', [agentId, copyId]).execute();

    return {
      database: target.kind,
      files: report.totals.files,
      entries: report.totals.entries,
      megabytes: Number(mb.toFixed(2)),
      importSeconds: Number(importSeconds.toFixed(2)),
      importFirstSeconds: Number(runs[0]!.seconds.toFixed(2)),
      importMBps: Number((mb / importSeconds).toFixed(2)),
      parseSeconds: Number(parseSeconds.toFixed(3)),
      parseMBps: Number((mb / parseSeconds).toFixed(1)),
      ratio: Number((importSeconds / parseSeconds).toFixed(1)),
      databaseSeconds: Number(databaseSeconds.toFixed(3)),
      databaseRatio: Number((databaseSeconds / parseSeconds).toFixed(1)),
    };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Every file imported whole, so a bench run at scale (`bench/import.ts 1000 200`) is also the soak of
 * what the import test checks on 150 files: a bench that imported less would time less work.
 */
function expectWholeImport(totals: ImportSessionsReport['totals'], files: number): void {
  if (totals.files !== files || totals.imported !== files || totals.failed !== 0)
    throw new Error(
      `the import took ${totals.imported} of ${files} files (${totals.failed} failed, ${totals.files} seen): ` +
        'the bench only times a whole import',
    );
}

/** The bench runner's lines: both ratios with the seconds behind them. */
export function ratioLines(r: ImportBenchResult): string[] {
  return [
    `import / JSON.parse loop, each the fastest of three: ${r.importSeconds} / ${r.parseSeconds} s = ${r.ratio}× (target ≤ 3×; ${r.entries.toLocaleString('en-US')} entries, ${r.megabytes} MB, ${r.files} files on ${r.database}); the first import, cold, ${r.importFirstSeconds} s`,
    `the database's own insert of the same rows / JSON.parse loop: ${r.databaseSeconds} / ${r.parseSeconds} s = ${r.databaseRatio}× (no importer can beat it)`,
  ];
}

if (require.main === module) {
  const [sessions, entriesPerSession] = process.argv.slice(2).map(Number);
  run({ ...(sessions ? { sessions } : {}), ...(entriesPerSession ? { entriesPerSession } : {}) })
    .then((r) => {
      process.stderr.write(
        `import: ${r.importMBps} MB/s (${r.megabytes} MB, ${r.entries} entries, ${r.files} files on ${r.database} in ${r.importSeconds}s)\n` +
          `JSON.parse loop: ${r.parseMBps} MB/s (${r.parseSeconds}s)\nratio: import is ${r.ratio}× the parse-only time\n` +
          `the database's own insert of the same rows: ${r.databaseSeconds}s = ${r.databaseRatio}× the parse-only time\n`,
      );
      process.stdout.write(`${JSON.stringify(r)}\n`);
    })
    .catch((err: unknown) => {
      process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    });
}
