import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { connectClient } from '../connect';
import { decideApproval, listApprovals, type DecisionInput } from '../../operations/approvals/approvals';
import { describeOutcome, renderApprovals } from '../approvals';
import { allowedAgent, configFromEnv, printResult, say, withStore, type CliContext, type JsonOption } from './shared';

/**
 * `keel approvals` lists tool calls waiting for a person (from the database); `keel approve` and
 * `keel deny` decide one through its session (TEMPORAL_ADDRESS, else the running keel dev).
 */
export function registerApprovalsCommands(program: Command, ctx: CliContext): void {
  program
    .command('approvals')
    .description('tool calls waiting for approval, across sessions, oldest first (arguments redacted)')
    .option('--agent <id>', "only this agent's calls")
    .option('--json', 'print { approvals } on stdout')
    .action(async (opts: JsonOption & { agent?: string }) => {
      const agentId = opts.agent !== undefined ? allowedAgent(opts.agent) : undefined;
      const list = await withStore((s) => listApprovals(s, { agentId }));
      printResult(opts, list);
      if (!opts.json) renderApprovals(list.approvals);
    });

  program
    .command('approve')
    .description('approve a waiting tool call: it runs once; a call decided before keeps its first outcome')
    .argument('<id>', 'the approval id (keel approvals lists them)')
    .option('--note <text>', 'said with the approval, stored with it')
    .option('--by <name>', 'who approves (default: the user running keel)')
    .option('--json', 'print the outcome on stdout')
    .action(async (id: string, opts: JsonOption & { note?: string; by?: string }) => {
      await decide(ctx, opts, {
        id,
        decision: 'approve',
        by: opts.by ?? whoami(),
        ...(opts.note ? { note: opts.note } : {}),
      });
    });

  program
    .command('deny')
    .description('deny a waiting tool call: it never runs, and the model reads who denied it and why')
    .argument('<id>', 'the approval id (keel approvals lists them)')
    .option('--reason <text>', 'why, told to the model')
    .option('--by <name>', 'who denies (default: the user running keel)')
    .option('--json', 'print the outcome on stdout')
    .action(async (id: string, opts: JsonOption & { reason?: string; by?: string }) => {
      await decide(ctx, opts, {
        id,
        decision: 'deny',
        by: opts.by ?? whoami(),
        ...(opts.reason ? { reason: opts.reason } : {}),
      });
    });
}

/** Decides through the session; exit code 1 when the call ended otherwise than asked (decided before, or timed out). */
async function decide(ctx: CliContext, opts: JsonOption, input: DecisionInput): Promise<void> {
  const { client, close } = await connectClient(configFromEnv());
  try {
    const outcome = await withStore((s) => decideApproval({ db: s.db, client }, input));
    printResult(opts, outcome);
    if (!opts.json) say(describeOutcome(outcome));
    ctx.exitCode = outcome.status === (input.decision === 'approve' ? 'approved' : 'denied') ? 0 : 1;
  } finally {
    await close();
  }
}

function whoami(): string {
  try {
    return userInfo().username;
  } catch {
    return 'cli';
  }
}
