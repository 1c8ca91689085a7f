/**
 * The `keel` command line, on commander: each command group registers itself from one file under
 * commands/, so help, options and usage errors come from one definition. Data goes to stdout
 * (`--json` prints the command's one result object, `--help` the help); progress and people-text go to stderr.
 * Exit codes: 0 ok, 1 failure, 2 bad usage.
 */
import { Command, CommanderError } from 'commander';
import { UsageError } from './connect';
import { operationErrorKind, type OperationErrorKind } from '../operations/errors';
import type { CliRoots } from './local-stack';
import type { CliContext } from './commands/shared';
import { registerStackCommands } from './commands/stack';
import { registerSessionCommands } from './commands/session-commands';
import { registerCompactionsCommands } from './commands/compactions-commands';
import { registerTransferCommands } from './commands/transfer-commands';
import { registerMaintenanceCommands } from './commands/maintenance-commands';
import { registerDoctorCommands } from './commands/doctor-commands';
import { registerSetupCommands } from './commands/setup-commands';
import { registerSubagentsCommands } from './commands/subagents-commands';
import { registerProfileCommands } from './commands/profile-commands';
import { registerReplayCommands } from './commands/replay-commands';
import { registerApprovalsCommands } from './commands/approvals-commands';
import { registerEmbeddingsCommands } from './commands/embeddings-commands';

const HINT = 'keel --help lists the commands; keel <command> --help shows its options';

/** The exit code of each kind of operation error: the one table from operation errors to exit codes. */
const EXIT_CODE_OF_KIND: Record<OperationErrorKind, number> = {
  'unknown-session': 1,
  'not-found': 1,
  busy: 1,
  // An input the operation cannot take is bad usage, said with the help hint.
  invalid: 2,
  unavailable: 1,
};

function buildProgram(ctx: CliContext): Command {
  const program = new Command('keel')
    .description('durable AI agent runs on Temporal and PostgreSQL')
    .addHelpText(
      'after',
      "\nCommands that reach workers (chat, serve, status, compact, approve, deny, compactions retry/revert/rerun, worker, subagents kill/steer) use TEMPORAL_ADDRESS, else the `keel dev` running under the same KEEL_HOME;\ndatabase commands use DATABASE_URL, else that stack's database, else the PGlite folder under KEEL_HOME.\nSettings: environment variables over keel.config.json (KEEL_CONFIG names another file).",
    )
    // Asked-for help is the command's output (stdout, so `keel --help | less` works); usage errors go to stderr.
    .configureOutput({ writeOut: (s) => void process.stdout.write(s), writeErr: (s) => void process.stderr.write(s) })
    .showHelpAfterError(`(${HINT})`)
    // `compactions --json` and `compactions show <id> --json`: an option after a subcommand is the subcommand's.
    .enablePositionalOptions()
    .exitOverride();
  registerStackCommands(program, ctx);
  registerSessionCommands(program, ctx);
  registerCompactionsCommands(program);
  registerTransferCommands(program, ctx);
  registerMaintenanceCommands(program);
  registerDoctorCommands(program, ctx);
  registerSetupCommands(program, ctx);
  registerSubagentsCommands(program, ctx);
  registerProfileCommands(program);
  registerReplayCommands(program);
  registerApprovalsCommands(program, ctx);
  registerEmbeddingsCommands(program, ctx);
  // Every subcommand inherits the output, error and exit settings.
  const inherit = (cmd: Command) => {
    for (const sub of cmd.commands) {
      sub.copyInheritedSettings(cmd);
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

async function main(argv: string[], roots: CliRoots): Promise<number> {
  const ctx: CliContext = { roots, exitCode: 0 };
  try {
    await buildProgram(ctx).parseAsync(argv, { from: 'user' });
  } catch (err) {
    // Commander has already printed its message (or the help) to stderr.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  }
  return ctx.exitCode;
}

/** Runs `keel <argv>` and exits the process with its code (0 ok, 1 failure, 2 bad usage). */
export function runKeelCli(argv: string[], roots: CliRoots): void {
  exitQuietlyWhenThePipeCloses();
  main(argv, roots).then(
    (code) => process.exit(code),
    (err) => {
      const kind = operationErrorKind(err);
      const code = err instanceof UsageError ? 2 : kind ? EXIT_CODE_OF_KIND[kind] : 1;
      process.stderr.write(`keel: ${err instanceof Error ? err.message : String(err)}\n`);
      if (code === 2) process.stderr.write(`(${HINT})\n`);
      process.exit(code);
    },
  );
}

/**
 * A reader that stopped reading (`keel --help | head -1`, `keel sessions | head`) is not a failure of
 * the command: it exits 0 without a stack trace. Any other write error still fails loudly.
 */
function exitQuietlyWhenThePipeCloses(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      process.exit(0);
    });
  }
}
