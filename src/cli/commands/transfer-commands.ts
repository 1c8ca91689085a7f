import type { Command } from 'commander';
import { UsageError } from '../connect';
import { agentConfig, loadKeelSettings } from '../../config/agent-config';
import { InvalidSessionKeyError, parseSessionKey } from '../../sessions/session-key';
import { importCommand, exportAllCommand, exportCommand } from '../transfer';
import { printResult, withStore, type CliContext, type JsonOption } from './shared';

/** `keel import` and `keel export`: OpenClaw JSONL in and out. */
export function registerTransferCommands(program: Command, ctx: CliContext): void {
  program
    .command('import')
    .description('import OpenClaw sessions: a sessions folder, or sessions.json and *.jsonl files')
    .argument('<paths...>', 'files or one folder')
    .requiredOption('--agent <id>', 'the agent that owns the imported sessions')
    .option(
      '--keep-context',
      'mark imported sessions fresh as of now, so the daily or idle reset does not start them over on their next message',
    )
    .option('--json', 'print the import report on stdout')
    .action(async (paths: string[], opts: JsonOption & { agent: string; keepContext?: boolean }) => {
      const config = agentConfig(loadKeelSettings(), opts.agent);
      const report = await withStore((s) =>
        importCommand(s.db, opts.agent, paths, {
          json: Boolean(opts.json),
          config,
          keepContext: Boolean(opts.keepContext),
        }),
      );
      printResult(opts, report);
      // Nothing usable: no session came of it (each file says why).
      if (report.totals.failed > 0 || report.totals.sessions === 0) ctx.exitCode = 1;
    });

  program
    .command('export')
    .description('a session’s transcript as OpenClaw JSONL (stdout, or --out FILE)')
    .argument('<sessionKey>', 'e.g. agent:main:main')
    .option('--agent <id>', 'the agent that owns the session (taken from an agent:<id>:… key)')
    .option('--session-id <id>', 'one of the key’s earlier transcripts (after a reset); the current one by default')
    .option(
      '--all',
      'every transcript the key has had, oldest first (with --out: a folder, one <sessionId>.jsonl each)',
    )
    .option('--out <file>', 'write to this file instead of stdout')
    .option('--json', 'print what was exported on stdout (needs --out: stdout carries the JSONL otherwise)')
    .action(
      async (key: string, opts: JsonOption & { agent?: string; sessionId?: string; out?: string; all?: boolean }) => {
        const agentId = agentOfKey(key, opts.agent);
        if (opts.sessionId === '') throw new UsageError('--session-id needs a value');
        if (opts.all && opts.sessionId)
          throw new UsageError('--all exports every session id of the key; drop --session-id, or --all to export one');
        if (opts.json && !opts.out)
          throw new UsageError('--json needs --out: without it stdout carries the exported JSONL');
        const out = opts.out ? { out: opts.out } : {};
        const report = await withStore<object>((s) =>
          opts.all
            ? exportAllCommand(s.db, agentId, key, out)
            : exportCommand(s.db, agentId, key, { ...out, ...(opts.sessionId ? { sessionId: opts.sessionId } : {}) }),
        );
        printResult(opts, report);
      },
    );
}

/**
 * The agent a command acts for: the one an `agent:<id>:…` key names (a conflicting `--agent` is
 * refused), else `--agent` (cron and hook keys, imported keys of another shape).
 */
function agentOfKey(key: string, agentOption: string | undefined): string {
  let named: string | undefined;
  try {
    named = parseSessionKey(key).agentId;
  } catch (err) {
    if (!(err instanceof InvalidSessionKeyError)) throw err;
  }
  if (named !== undefined && agentOption !== undefined && agentOption !== named) {
    throw new UsageError(
      `--agent ${agentOption} conflicts with the key ${key}, which names agent ${named}; drop --agent`,
    );
  }
  const agentId = named ?? agentOption;
  if (agentId === undefined) throw new UsageError(`the key ${key} names no agent; add --agent <id>`);
  return agentId;
}
