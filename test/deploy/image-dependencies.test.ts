/**
 * The worker image installs its dependencies with `npm ci --omit=dev` (Dockerfile), which refuses a
 * lockfile out of step with package.json, optional packages of other platforms included. A lockfile
 * that had lost them went unnoticed while CI fell back to `npm install`; this runs npm's own check
 * (a dry run, offline: nothing downloaded or written) on copies of the two files, as the image build does.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

async function npmCiDryRun(extra: readonly string[]): Promise<{ code: number; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-npm-ci-'));
  try {
    await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'));
    await copyFile(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    const args = ['ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', ...extra];
    try {
      const { stdout, stderr } = await run('npm', args, { cwd: dir, timeout: 120_000 });
      return { code: 0, output: `${stdout}\n${stderr}` };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : 1, output: `${e.stdout ?? ''}\n${e.stderr ?? ''}` };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the lockfile, as the worker image and CI install from it', () => {
  it('the Dockerfile installs with npm ci --omit=dev', async () => {
    expect(await readFile(join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/RUN npm ci --omit=dev /);
  });

  it.each([
    ['the image (production dependencies)', ['--omit=dev']],
    ['CI (every dependency)', []],
  ])(
    'npm ci accepts it for %s',
    async (_what, extra) => {
      const result = await npmCiDryRun(extra);
      // npm names what is missing ("Missing: @swc/core-darwin-arm64@… from lock file"): shown on failure.
      expect(result.output).not.toMatch(/Missing: .* from lock file|can only install packages when/);
      expect(result.code).toBe(0);
    },
    150_000,
  );
});
