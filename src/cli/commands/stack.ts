import type { Command } from 'commander';
import { runDev } from '../dev';
import { chatCommand } from '../chat-command';
import { workerCommand } from '../worker-command';
import { serveCommand } from '../serve-command';
import { say } from './shared';
import type { CliContext } from './shared';

/** `keel dev`, `keel chat`, `keel serve` and `keel worker`: talking to an agent, and running the parts that do. */
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
    .description(
      'interactive chat with running workers (TEMPORAL_ADDRESS, else the running keel dev); replies stream with DATABASE_URL',
    )
    .argument('[sessionKey]', 'the session to chat with')
    .option('--session <key>', 'the session to chat with (same as the argument)')
    .action(async (key: string | undefined, opts: { session?: string }) => {
      ctx.exitCode = await chatCommand(key ?? opts.session ?? 'agent:main:main');
    });

  program
    .command('serve')
    .description(
      'the HTTP API (KEEL_API_HOST:KEEL_API_PORT, default 127.0.0.1:8787; bearer KEEL_API_TOKEN) for TEMPORAL_ADDRESS, else the running `keel dev`; see docs/http-api.md',
    )
    .action(async () => {
      ctx.exitCode = await serveCommand(say);
    });

  program
    .command('worker')
    .description('a worker for TEMPORAL_ADDRESS + DATABASE_URL, else for the running keel dev; SIGINT/SIGTERM drain it')
    .action(async () => {
      ctx.exitCode = await workerCommand(ctx.roots.runWorker);
    });
}
