import type { Command } from 'commander';
import { runDev } from '../dev';
import { chat } from '../chat';
import { connectClient } from '../connect';
import { configFromEnv, type CliContext } from './shared';

/** `keel dev` and `keel chat`: talking to an agent. */
export function registerStackCommands(program: Command, ctx: CliContext): void {
  program
    .command('dev')
    .description('embedded Temporal + PGlite + worker + interactive chat')
    .option('--check', 'start and stop the embedded stack, then exit')
    .option('--session <key>', 'the session to chat with', 'agent:main:main')
    .action(async (opts: { check?: boolean; session: string }) => {
      ctx.exitCode = await runDev({ check: Boolean(opts.check), sessionKey: opts.session }, ctx.roots.startLocalStack);
    });

  program
    .command('chat')
    .description('interactive chat with running workers (replies stream with DATABASE_URL)')
    .argument('[sessionKey]', 'the session to chat with')
    .option('--session <key>', 'the session to chat with (same as the argument)')
    .action(async (key: string | undefined, opts: { session?: string }) => {
      const sessionKey = key ?? opts.session ?? 'agent:main:main';
      const config = configFromEnv();
      const log = (line: string) => process.stderr.write(`${line}\n`);
      // PGlite lives inside the worker's process: only the workers' PostgreSQL can stream to another one.
      if (!config.databaseUrl) log("replies arrive whole: set DATABASE_URL to the workers' PostgreSQL to see them stream");
      const { client, close } = await connectClient(config, { stream: true, log });
      try {
        await chat(client, sessionKey, log);
      } finally {
        await close();
      }
    });
}
