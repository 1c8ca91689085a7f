#!/usr/bin/env node
/**
 * The `keel` command line. Data goes to stdout (`--json` for machines); progress and people-text to
 * stderr. Exit codes: 0 ok, 1 failure, 2 bad usage.
 */
import { runDev } from './dev';
import { resolveTemporalCli } from '../temporal/resolve-cli';
import { configFromEnv } from '../config/keel-config';
import { openRuntime } from '../runtime/activity-deps';

const USAGE = `usage: keel <command>
  dev [--check] [--session <key>]   embedded Temporal + PGlite + worker + interactive chat
  migrate                           bring the database schema up to date
  temporal-cli                      find or build the Temporal CLI and print its path`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'dev': {
      const sessionIdx = rest.indexOf('--session');
      const sessionKey = sessionIdx >= 0 ? rest[sessionIdx + 1] : 'agent:main:main';
      if (!sessionKey) return usage('--session needs a session key, e.g. agent:main:main');
      return runDev({ check: rest.includes('--check'), sessionKey });
    }
    case 'migrate': {
      const runtime = await openRuntime({ config: configFromEnv() });
      await runtime.close();
      process.stderr.write('migrated\n');
      return 0;
    }
    case 'temporal-cli': {
      const cli = await resolveTemporalCli();
      if (cli.source === 'download') return 1;
      process.stdout.write(`${cli.path}\n`);
      return 0;
    }
    default:
      return usage(command ? `unknown command "${command}"` : undefined);
  }
}

function usage(problem?: string): number {
  if (problem) process.stderr.write(`keel: ${problem}\n`);
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`keel: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
