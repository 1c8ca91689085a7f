import type { Command } from 'commander';
import { runDev } from '../dev';
import { chatCommand } from '../chat-command';
import { workerCommand } from '../worker-command';
import type { CliContext } from './shared';

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
    .description('interactive chat with running workers (TEMPORAL_ADDRESS, else the running keel dev); replies stream with DATABASE_URL')
    .argument('[sessionKey]', 'the session to chat with')
    .option('--session <key>', 'the session to chat with (same as the argument)')
    .action(async (key: string | undefined, opts: { session?: string }) => {
      ctx.exitCode = await chatCommand(key ?? opts.session ?? 'agent:main:main');
    });

  program
    .command('worker')
    .description('a worker for TEMPORAL_ADDRESS + DATABASE_URL, else for the running keel dev; SIGINT/SIGTERM drain it')
    .action(async () => {
      ctx.exitCode = await workerCommand(ctx.roots.runWorker);
    });
}
