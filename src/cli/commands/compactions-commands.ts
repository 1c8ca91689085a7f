import type { Command } from 'commander';
import { agentConfig, loadKeelSettings } from '../../config/agent-config';
import { configuredWindow } from '../../config/configured-window';
import { connectClient } from '../connect';
import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema';
import { compactionsList, compactionsRetry, compactionsShow } from '../compactions';
import { compactionsCompare, compactionsRerun, compactionsRevert } from '../compaction-edits';
import { DEFAULT_CLI_AGENT, allowedAgent, countOf, printResult, withStore, type JsonOption } from './shared';

/** `keel compactions [--failed]`, `compactions show|retry|revert|rerun <id>`, `compactions compare <a> <b>`. */
export function registerCompactionsCommands(program: Command): void {
  const compactions = program
    .command('compactions')
    .description('compaction history, newest first')
    .option('--failed', 'only failed or degraded compactions, with why and the retry command')
    .option('--agent <id>', 'only this agent’s compactions')
    .option('--json', 'print { compactions } on stdout')
    .enablePositionalOptions()
    .action(async (opts: JsonOption & { failed?: boolean; agent?: string }) => {
      printResult(
        opts,
        await withStore((s) =>
          compactionsList({
            db: s.db,
            failed: opts.failed ?? false,
            ...(opts.agent ? { agentId: opts.agent } : {}),
            json: Boolean(opts.json),
          }),
        ),
      );
    });

  compactions
    .command('show')
    .description(
      'one compaction: its summary, the range it covers, tokens before → after, the diff from the previous summary',
    )
    .argument('<id>', 'a compaction id (keel compactions lists them)')
    .option('--agent <id>', 'the agent the compaction belongs to', DEFAULT_CLI_AGENT)
    .option('--json', 'print { compaction, detail } on stdout')
    .action(async (id: string, opts: JsonOption & { agent: string }) => {
      printResult(
        opts,
        await withStore((s) =>
          compactionsShow({ db: s.db, agentId: allowedAgent(opts.agent), id, json: Boolean(opts.json) }),
        ),
      );
    });

  compactions
    .command('retry')
    .description(
      'a fresh compaction for that session (joins a running one; TEMPORAL_ADDRESS, else the running `keel dev`)',
    )
    .argument('<id>', 'the failed or degraded compaction')
    .option('--agent <id>', 'the agent the compaction belongs to', DEFAULT_CLI_AGENT)
    .option('--json', 'print the retry result on stdout')
    .action(async (id: string, opts: JsonOption & { agent: string }) => {
      printResult(
        opts,
        await withWorkers((w) =>
          compactionsRetry({ ...w, agentId: allowedAgent(opts.agent), id, json: Boolean(opts.json) }),
        ),
      );
    });

  compactions
    .command('revert')
    .description(
      'move the session’s window back to before that compaction (nothing is deleted; the revert is recorded and can be reverted)',
    )
    .argument('<id>', 'the compaction to undo (a revert undoes a revert)')
    .option('--agent <id>', 'the agent the compaction belongs to', DEFAULT_CLI_AGENT)
    .option('--json', 'print { compaction, laterCompactionsUndone } on stdout')
    .addHelpText(
      'after',
      '\nThe session sees the earlier summary and the raw messages after it again, from its next model call on (also mid-turn).\nThreshold compaction is held after a revert until the context grows by KEEL_COMPACTION_MIN_RECLAIM of the window\n(a provider overflow still compacts at once). Reverting an older compaction undoes the later ones too.\nRuns in the session’s compaction workflow (TEMPORAL_ADDRESS, else the running `keel dev`); refused while a compaction of the session runs.',
    )
    .action(async (id: string, opts: JsonOption & { agent: string }) => {
      printResult(
        opts,
        await withWorkers((w) =>
          compactionsRevert({ ...w, agentId: allowedAgent(opts.agent), id, json: Boolean(opts.json) }),
        ),
      );
    });

  compactions
    .command('rerun')
    .description('summarize that compaction’s range again as a new compaction record (recorded only, unless --apply)')
    .argument('<id>', 'the compaction whose range to summarize again')
    .option('--agent <id>', 'the agent the compaction belongs to', DEFAULT_CLI_AGENT)
    .option('--model <model>', 'another model of the agent’s summarizer endpoint')
    .option('--instructions <text>', 'extra focus for the summarizer')
    .option(
      '--apply',
      'make the new summary the session’s (only while that compaction’s range is the session’s window); revertible',
    )
    .option('--json', 'print { compaction } on stdout')
    .addHelpText(
      'after',
      '\nWithout --apply the new summary is kept on its record for `keel compactions compare <id> <new id>` and the session is unchanged.\nWithout a model configured (or past the summarizer spend limit) the extractive summarizer writes it.',
    )
    .action(
      async (
        id: string,
        opts: JsonOption & { agent: string; model?: string; instructions?: string; apply?: boolean },
      ) => {
        const edit = {
          agentId: allowedAgent(opts.agent),
          id,
          apply: Boolean(opts.apply),
          json: Boolean(opts.json),
          ...(opts.model ? { model: opts.model } : {}),
          ...(opts.instructions ? { instructions: opts.instructions } : {}),
        };
        printResult(opts, await withWorkers((w) => compactionsRerun({ ...w, ...edit })));
      },
    );

  compactions
    .command('compare')
    .description('two summaries side by side (stacked when the terminal is narrow) with the identifiers each kept')
    .argument('<a>', 'a compaction id')
    .argument('<b>', 'another compaction id (e.g. a rerun of <a>)')
    .option('--agent <id>', 'the agent the compactions belong to', DEFAULT_CLI_AGENT)
    .option('--width <columns>', 'terminal width to render for (default: the terminal’s)', countOf('--width'))
    .option('--json', 'print { a, b, coverage } on stdout')
    .action(async (a: string, b: string, opts: JsonOption & { agent: string; width?: number }) => {
      printResult(
        opts,
        await withStore((s) =>
          compactionsCompare({
            db: s.db,
            agentId: allowedAgent(opts.agent),
            a,
            b,
            json: Boolean(opts.json),
            ...(opts.width ? { width: opts.width } : {}),
          }),
        ),
      );
    });
}

/** What commands that start a compaction workflow need: the store, a Temporal client and the agents' windows. */
async function withWorkers<T>(
  fn: (w: {
    db: Kysely<Database>;
    temporalClient: Client;
    taskQueue: string;
    contextWindowFor: (agentId: string) => number;
  }) => Promise<T>,
): Promise<T> {
  const settings = loadKeelSettings();
  const config = settings.defaults;
  const { client, close } = await connectClient(config);
  try {
    return await withStore((s) =>
      fn({
        db: s.db,
        temporalClient: client.temporal,
        taskQueue: config.taskQueue,
        contextWindowFor: (agentId) => configuredWindow(agentConfig(settings, agentId)).tokens,
      }),
    );
  } finally {
    await close();
  }
}
