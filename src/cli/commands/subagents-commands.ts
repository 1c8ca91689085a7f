import type { Command } from 'commander';
import { connectClient } from '../connect';
import { killSubagentRun, listSubagents, steerSubagentRun } from '../../operations/subagents/subagents';
import { asUsage, renderSubagents } from '../subagents';
import { createSessionSignals } from '../../client/session-signals';
import type { SessionSignals } from '../../runtime/deps';
import { keyRingFor } from '../../config/keel-config';
import { keelDataConverter } from '../../security/payload-codec';
import {
  DEFAULT_CLI_AGENT,
  allowedAgent,
  configFromEnv,
  printResult,
  say,
  withStore,
  type CliContext,
  type JsonOption,
} from './shared';

/** `keel subagents`: list runs; `kill` and `steer` reach the workers (TEMPORAL_ADDRESS, else the running keel dev). */
export function registerSubagentsCommands(program: Command, ctx: CliContext): void {
  const subagents = program
    .command('subagents')
    .description('subagent runs, newest first: state, mode, parent, task')
    .option('--parent <key>', "only this parent session's subagents")
    .option('--agent <id>', "only this agent's runs")
    .option('--json', 'print the runs on stdout')
    .action(async (opts: JsonOption & { parent?: string; agent?: string }) => {
      const list = await withStore((s) => listSubagents(s, { parentSessionKey: opts.parent, agentId: opts.agent }));
      printResult(opts, list);
      if (!opts.json) renderSubagents(list.subagents);
    });

  subagents
    .command('kill')
    .description("cancel a subagent's workflow and its in-flight work; its parent hears the kill as the outcome")
    .argument('<id>', 'the subagent id (keel subagents lists them)')
    .option('--agent <id>', "the parent session's agent", DEFAULT_CLI_AGENT)
    .option('--json', 'print the result on stdout')
    .action(async (id: string, opts: JsonOption & { agent: string }) => {
      const result = await withSignals((sessions) =>
        withStore((s) => asUsage(killSubagentRun({ db: s.db, sessions }, { agentId: allowedAgent(opts.agent), id }))),
      );
      say(result.message);
      printResult(opts, result);
      ctx.exitCode = result.killed ? 0 : 1;
    });

  subagents
    .command('steer')
    .description('send a subagent a message; its answer reaches its parent')
    .argument('<id>', 'the subagent id')
    .argument('<text...>', 'the message')
    .option('--agent <id>', "the parent session's agent", DEFAULT_CLI_AGENT)
    .option('--json', 'print the result on stdout')
    .action(async (id: string, words: string[], opts: JsonOption & { agent: string }) => {
      const result = await withSignals((sessions) =>
        withStore((s) =>
          asUsage(
            steerSubagentRun({ db: s.db, sessions }, { agentId: allowedAgent(opts.agent), id, text: words.join(' ') }),
          ),
        ),
      );
      say(result.message);
      printResult(opts, result);
      ctx.exitCode = result.sent ? 0 : 1;
    });
}

async function withSignals<T>(fn: (sessions: SessionSignals) => Promise<T>): Promise<T> {
  const config = configFromEnv();
  const { client, close } = await connectClient(config);
  try {
    return await fn(
      createSessionSignals(
        client.temporal.connection,
        config.temporalNamespace,
        config.taskQueue,
        keelDataConverter(keyRingFor(config)),
      ),
    );
  } finally {
    await close();
  }
}
