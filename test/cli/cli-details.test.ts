import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { keel } from '../support/keel-cli';
import { entryArgs } from '../support/compiled-entries';

// Each case starts `keel` (ts-node) processes: under load one needs more than jest's default.
jest.setTimeout(120_000);

/** Small promises of the command line a newcomer meets in the first hour. */
describe('keel command line details', () => {
  let home: string;
  let env: Record<string, string | undefined>;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-details-'));
    env = {
      KEEL_HOME: home,
      KEEL_CONFIG: undefined,
      DATABASE_URL: undefined,
      TEMPORAL_ADDRESS: undefined,
      KEEL_RESERVE_TOKENS: undefined,
    };
  });

  it('prints asked-for help on stdout and exits 0; status and compact say they work against keel dev', async () => {
    const [status, compact] = await Promise.all([keel(['status', '--help'], env), keel(['compact', '--help'], env)]);
    for (const run of [status, compact]) {
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      // Commander wraps descriptions at the terminal width.
      expect(run.stdout.replace(/\s+/g, ' ')).toContain('TEMPORAL_ADDRESS, else the running `keel dev`');
      expect(run.stdout).not.toContain('needs TEMPORAL_ADDRESS');
    }
  });

  it('exits 0 without a stack trace when the reader of its output goes away (keel --help | head -1)', async () => {
    // The reader closes its end before keel writes a byte: every write then fails with EPIPE.
    const child = spawn(process.execPath, [...entryArgs('workers/keel.ts'), '--help'], {
      cwd: resolve(__dirname, '../..'),
      env: { ...process.env, KEEL_HOME: home, TS_NODE_SWC: 'true', TS_NODE_TRANSPILE_ONLY: 'true' },
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });

  it('refuses a bad session key before saying it is compacting', async () => {
    const run = await keel(['compact', 'hello'], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('hello');
    expect(run.stderr).not.toContain('compacting');
  });

  it('echoes the bad value of a setting', async () => {
    const run = await keel(['sessions'], { ...env, KEEL_RESERVE_TOKENS: 'abc' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('KEEL_RESERVE_TOKENS: ');
    expect(run.stderr).toContain('(got "abc")');
  });

  it('never echoes a secret', async () => {
    const run = await keel(['sessions'], {
      ...env,
      KEEL_CODEC_SERVER_PORT: '7233',
      KEEL_CODEC_SERVER_TOKEN: 'short',
      KEEL_ENCRYPTION_KEYS: 'k1:not-base64!',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('not-base64!');
  });

  it('reports invalid JSON in keel.config.json by line and column', async () => {
    const file = join(home, 'keel.config.json');
    await writeFile(file, '{\n  "model": "claude-sonnet-4-6",\n  "agents": { "ops": { } },\n}\n');
    const run = await keel(['sessions'], { ...env, KEEL_CONFIG: file });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('not valid JSON at line 4, column 1:');
    expect(run.stderr).not.toContain('at position');
  });
});
