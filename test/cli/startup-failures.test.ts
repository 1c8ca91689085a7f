import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keel, runEntry } from '../support/keel-cli';

/** Command lines of running processes that mention `text` (the test's own KEEL_HOME). */
function processesMentioning(text: string): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(text) && !line.includes('ps -eo'));
}

describe('a failed startup stops everything it started and names the cause', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-startup-'));
  });
  afterEach(async () => rm(home, { recursive: true, force: true }));
  const base = {
    ANTHROPIC_API_KEY: undefined,
    ANTHROPIC_BASE_URL: undefined,
    TEMPORAL_ADDRESS: undefined,
    DATABASE_URL: undefined,
  };

  it('dev with an unreachable DATABASE_URL exits 1 naming it, before it starts a Temporal dev server', async () => {
    const run = await keel(['dev', '--check'], {
      ...base,
      KEEL_HOME: home,
      DATABASE_URL: 'postgres://keel:keel@127.0.0.1:1/x',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'cannot reach the database at postgres://keel:***@127.0.0.1:1/x (DATABASE_URL): ECONNREFUSED',
    );
    // The database is checked first: no dev server was started (no history file in this KEEL_HOME), none runs.
    expect(existsSync(join(home, 'temporal.db'))).toBe(false);
    expect(processesMentioning(home)).toEqual([]);
  });

  it('dev with an unknown context engine exits 1 naming KEEL_CONTEXT_ENGINE before starting anything', async () => {
    const run = await keel(['dev', '--check'], { ...base, KEEL_HOME: home, KEEL_CONTEXT_ENGINE: 'nope' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('KEEL_CONTEXT_ENGINE: "nope" is not a registered context engine');
    expect(run.stderr).not.toContain('temporal:');
    expect(processesMentioning(home)).toEqual([]);
  });

  it('dev with a KEEL_TOOLS_MODULE that does not exist exits 1 naming the variable', async () => {
    const run = await keel(['dev', '--check'], {
      ...base,
      KEEL_HOME: home,
      KEEL_TOOLS_MODULE: join(home, 'missing-tools.js'),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/KEEL_TOOLS_MODULE: .*missing-tools\.js does not exist/);
  });

  it('a KEEL_HOME this process cannot keep a folder in: the worker and dev exit 1 naming the folder and the way out', async () => {
    const file = join(home, 'not-a-folder');
    await writeFile(file, 'a file, not a folder');
    const worker = await runEntry('workers/main.ts', [], { ...base, KEEL_HOME: file, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(worker.code).toBe(1);
    expect(worker.stderr).toContain(
      `cannot keep the embedded database in ${join(file, 'db')} (ENOTDIR: a file stands where a folder is needed); set KEEL_HOME to a folder this process can write, or DATABASE_URL to a PostgreSQL server`,
    );
    const dev = await keel(['dev', '--check'], { ...base, KEEL_HOME: file });
    expect(dev.code).toBe(1);
    expect(dev.stderr).toContain(
      `cannot keep keel dev's files (KEEL_HOME) in ${file} (EEXIST: a file stands where a folder is needed); set KEEL_HOME to a folder this process can write`,
    );
    expect(processesMentioning(file)).toEqual([]);
  });

  it('the worker process exits 1 naming KEEL_CONTEXT_ENGINE or a switch it cannot read; without a model it starts (compaction works extractively)', async () => {
    const env = { ...base, KEEL_HOME: home, TEMPORAL_ADDRESS: '127.0.0.1:1' };
    const engine = await runEntry('workers/main.ts', [], {
      ...env,
      ANTHROPIC_API_KEY: 'k',
      KEEL_CONTEXT_ENGINE: 'nope',
    });
    expect(engine.code).toBe(1);
    expect(engine.stderr).toContain('KEEL_CONTEXT_ENGINE: "nope" is not a registered context engine');
    // A switch's word it does not know stops the worker too, rather than running with the opposite of what was meant.
    const sealed = await runEntry('workers/main.ts', [], {
      ...env,
      ANTHROPIC_API_KEY: 'k',
      KEEL_ENCRYPT_AT_REST: 'enabled',
    });
    expect(sealed.code).toBe(1);
    expect(sealed.stderr).toContain(
      'KEEL_ENCRYPT_AT_REST: use on or off (also true/false, 1/0, yes/no), not "enabled"',
    );
    // No model is not a configuration error for a worker: it passes validation and fails only on the unreachable server.
    const model = await runEntry('workers/main.ts', [], env);
    expect(model.code).toBe(1);
    expect(model.stderr).not.toContain('invalid Keel configuration');
    expect(model.stderr).toMatch(/127\.0\.0\.1:1|Connection refused/);
  });
});
