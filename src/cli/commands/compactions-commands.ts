import type { Command } from 'commander';
import { agentConfig, loadKeelSettings } from '../../config/agent-config';
import { configuredWindow } from '../../config/configured-window';
import { connectClient } from '../connect';
import { compactionsList, compactionsRetry, compactionsShow } from '../compactions';
import { DEFAULT_CLI_AGENT, allowedAgent, printResult, withStore, type JsonOption } from './shared';

/** `keel compactions [--failed]`, `compactions show <id>`, `compactions retry <id>`. */
export function registerCompactionsCommands(program: Command): void {
  const compactions = program
    .command('compactions')
    .description('compaction history, newest first')
    .option('--failed', 'only failed or degraded compactions, with why and the retry command')
    .option('--agent <id>', 'only this agent’s compactions')
    .option('--json', 'print { compactions } on stdout')
    .enablePositionalOptions()
    .action(async (opts: JsonOption & { failed?: boolean; agent?: string }) => {
      printResult(opts, await withStore((s) => compactionsList({ db: s.db, failed: opts.failed ?? false, ...(opts.agent ? { agentId: opts.agent } : {}), json: Boolean(opts.json) })));
    });

  compactions
    .command('show')
    .description('one compaction: its summary, the range it covers, tokens before → after, the diff from the previous summary')
    .argument('<id>', 'a compaction id (keel compactions lists them)')
    .option('--agent <id>', 'the agent the compaction belongs to', DEFAULT_CLI_AGENT)
    .option('--json', 'print { compaction, detail } on stdout')
    .action(async (id: string, opts: JsonOption & { agent: string }) => {
      printResult(opts, await withStore((s) => compactionsShow({ db: s.db, agentId: allowedAgent(opts.agent), id, json: Boolean(opts.json) })));
    });

  compactions
    .command('retry')
    .description('a fresh compaction for that session (joins a running one; needs TEMPORAL_ADDRESS)')
    .argument('<id>', 'the failed or degraded compaction')
    .option('--agent <id>', 'the agent the compaction belongs to', DEFAULT_CLI_AGENT)
    .option('--json', 'print the retry result on stdout')
    .action(async (id: string, opts: JsonOption & { agent: string }) => {
      const settings = loadKeelSettings();
      const config = settings.defaults;
      const { client, close } = await connectClient(config);
      try {
        printResult(
          opts,
          await withStore((s) =>
            compactionsRetry({ db: s.db, temporalClient: client.temporal, taskQueue: config.taskQueue, agentId: allowedAgent(opts.agent), id, contextWindowFor: (agentId) => configuredWindow(agentConfig(settings, agentId)).tokens, json: Boolean(opts.json) }),
          ),
        );
      } finally {
        await close();
      }
    });
}
