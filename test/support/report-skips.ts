/**
 * Jest globalSetup: without TEST_DATABASE_URL, says at the start of the run which suites are skipped
 * (describeOnPostgres) and which run on PGlite only, one line each, and how to run them all; without
 * a Chromium, that the report's browser test is skipped and how to include it; likewise without docker-compose or tmux.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { chromiumPath, dockerComposePath, tmuxPath } from './tool-path';

const ROOT = join(__dirname, '..', '..');
const POSTGRES_ONLY = /describeOnPostgres\(\s*'([^']*)',\s*'([^']*)'/g;
const BOTH_DATABASES = /\b(testDatabases|sharedDatabases)\(\)/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? testFiles(join(dir, d.name)) : d.name.endsWith('.test.ts') ? [join(dir, d.name)] : [],
  );
}

export default function reportSkips(): void {
  if (!chromiumPath()) {
    process.stderr.write(
      "\nNo Chromium found, so test/replay/report-browser.test.ts is skipped (install Debian's chromium: apt-get install -y chromium, or set CHROMIUM_PATH; .ci/run does).\n",
    );
  }
  if (!dockerComposePath()) {
    process.stderr.write(
      "\nNo docker-compose found, so test/deploy/compose-config.test.ts is skipped (install Debian's docker-compose: apt-get install -y docker-compose, or set DOCKER_COMPOSE_PATH; .ci/run does).\n",
    );
  }
  if (!tmuxPath()) {
    process.stderr.write(
      "\nNo tmux found, so test/cli/dev-terminal.test.ts and test/approvals/approval-chat.test.ts are skipped (install Debian's tmux: apt-get install -y tmux, or set TMUX_PATH; .ci/run does).\n",
    );
  }
  if (process.env.TEST_DATABASE_URL) return;
  const lines: string[] = [];
  for (const file of testFiles(join(ROOT, 'test')).sort()) {
    const source = readFileSync(file, 'utf8');
    const name = relative(ROOT, file);
    for (const [, suite, why] of source.matchAll(POSTGRES_ONLY))
      lines.push(`  ${'skipped'.padEnd(11)}  ${name}: ${suite} (needs PostgreSQL: ${why})`);
    if (BOTH_DATABASES.test(source))
      lines.push(`  PGlite only  ${name} (its PostgreSQL variant needs TEST_DATABASE_URL)`);
  }
  if (lines.length === 0) return;
  process.stderr.write(
    `\nTEST_DATABASE_URL is not set, so these suites skip PostgreSQL (run \`npm run test:pg\` to include them):\n${lines.join('\n')}\n\n`,
  );
}
