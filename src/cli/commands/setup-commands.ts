import type { Command } from 'commander';
import { loadKeelSettings } from '../../config/agent-config';
import { resolveTemporalCli } from '../../temporal/resolve-cli';
import { agentsCommand } from '../agents';
import { printResult, say, withStore, type CliContext, type JsonOption } from './shared';

/** `keel agents`, `keel migrate`, `keel temporal-cli`: what is configured and what is installed. */
export function registerSetupCommands(program: Command, ctx: CliContext): void {
  program
    .command('agents')
    .description('configured agents and what each resolves to (keel.config.json)')
    .option('--json', 'print the report on stdout')
    .action((opts: JsonOption) => {
      printResult(opts, agentsCommand(loadKeelSettings(), Boolean(opts.json)));
    });

  program
    .command('migrate')
    .description('bring the database schema up to date')
    .action(async () => {
      await withStore(async () => undefined);
      say('migrated');
    });

  program
    .command('temporal-cli')
    .description('find or build the Temporal CLI and print its path')
    .action(async () => {
      const cli = await resolveTemporalCli();
      if (cli.source === 'not-found') {
        ctx.exitCode = 1;
        return;
      }
      process.stdout.write(`${cli.path}\n`);
    });
}
