/**
 * The `keel` command line. Data goes to stdout (`--json` prints the command's one result object);
 * progress and people-text go to stderr. Exit codes: 0 ok, 1 failure, 2 bad usage.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { runDev } from './dev';
import { resolveTemporalCli } from '../temporal/resolve-cli';
import { loadKeelSettings, agentConfig } from '../config/agent-config';
import { configuredWindow } from '../config/configured-window';
import { agentsCommand, sessionModelCommand } from './agents';
import { openStore, storeTargetFor, type Store } from '../store/connect';
import { connectClient, UsageError } from './connect';
import { forKnownSession } from './session-errors';
import { compactionsList, compactionsRetry, compactionsShow } from './compactions';
import { importCommand, exportCommand } from './transfer';
import { contextBar, contextSplitBar } from './context-bar';
import { promptCacheLine } from './prompt-cache-line';
import { subagentsKill, subagentsList, subagentsSteer } from './subagents';
import { createSessionSignals } from '../client/session-signals';
import { chatCommand } from './chat-command';
import { runMaintenance } from '../store/maintenance';
import type { CliRoots } from './local-stack';
import { workerCommand } from './worker-command';

const USAGE = `usage: keel <command> [options]
  dev [--check] [--session <key>]          embedded Temporal + PGlite + worker + interactive chat
  chat [sessionKey]                        interactive chat with running workers (streams with DATABASE_URL)
  worker                                   a worker for TEMPORAL_ADDRESS/DATABASE_URL or the running \`keel dev\`
  status <sessionKey> [--json]             context usage, pressure, compactions and prompt-cache hit rate of a session
  compact <sessionKey> [--keep-recent N] [--instructions TEXT] [--json]
  compactions [--failed] [--agent ID] [--json]
  compactions show <id> [--json]
  compactions retry <id> [--json]          a fresh compaction for that session (joins a running one)
  import <file.jsonl|sessions.json|dir>... --agent ID [--json]
  export <sessionKey> --agent ID [--out FILE]
  maintenance [--enforce] [--prune-days N] [--max-entries N] [--agent ID] [--json]
  agents [--json]                          configured agents and what each resolves to (keel.config.json)
  session model <sessionKey> [MODEL | --clear] [--json]   show, set or clear a session's model
  subagents [--parent KEY] [--agent ID] [--json]          subagent runs, newest first
  subagents kill <id> | steer <id> TEXT [--json]          cancel a subagent (its parent hears it) or send it a message
  migrate                                  bring the database schema up to date
  temporal-cli                             find or build the Temporal CLI and print its path
Commands that reach workers (chat, status, compact, compactions retry, worker) use TEMPORAL_ADDRESS,
else the \`keel dev\` running under the same KEEL_HOME; database commands use DATABASE_URL, else that
stack's database, else the PGlite folder under KEEL_HOME.
Settings: environment variables over keel.config.json (KEEL_CONFIG names another file).`;

const OPTIONS = {
  json: { type: 'boolean' },
  check: { type: 'boolean' },
  failed: { type: 'boolean' },
  enforce: { type: 'boolean' },
  clear: { type: 'boolean' },
  session: { type: 'string' },
  parent: { type: 'string' },
  agent: { type: 'string' },
  out: { type: 'string' },
  instructions: { type: 'string' },
  'keep-recent': { type: 'string' },
  'prune-days': { type: 'string' },
  'max-entries': { type: 'string' },
} as const;

const count = (flag: string) => z.coerce.number({ message: `--${flag} must be a number` }).int(`--${flag} must be a whole number`).nonnegative(`--${flag} must be ≥ 0`);

function parseCount(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = count(flag).safeParse(value);
  if (!parsed.success) throw new UsageError(parsed.error.issues[0]!.message);
  return parsed.data;
}

/** The environment over keel.config.json's top level: what commands without an agent use. */
const configFromEnv = () => loadKeelSettings().defaults;

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const config = configFromEnv();
  const store = await openStore(storeTargetFor(config));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

async function main(argv: string[], roots: CliRoots): Promise<number> {
  const { values: opts, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, ...args] = positionals;
  const print = (result: unknown) => {
    if (opts.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  };
  switch (command) {
    case 'dev':
      return runDev({ check: Boolean(opts.check), sessionKey: opts.session ?? 'agent:main:main' }, roots.startLocalStack);
    case 'worker':
      return workerCommand(roots.runWorker);
    case 'chat':
      return chatCommand(args[0] ?? opts.session ?? 'agent:main:main');
    case 'status': {
      const key = required(args[0], 'a session key: keel status agent:main:main');
      const { client, close } = await connectClient(configFromEnv());
      try {
        const status = await forKnownSession(key, () => client.getStatus(key));
        print(status);
        if (!opts.json) {
          process.stderr.write(`${key}\n${contextBar(status)}\n`);
          if (status.contextSplit) process.stderr.write(`${contextSplitBar(status.contextSplit, status.contextWindow)}\n`);
          process.stderr.write(`turns ${status.turnsCompleted} · compactions ${status.compactionCount}${status.lastCompactionId ? ` (last ${status.lastCompactionId})` : ''} · queued ${status.queuedTurns}${status.model ? ` · model ${status.model}` : ''}\n`);
          if (status.promptCache) process.stderr.write(`${promptCacheLine(status.promptCache)}\n`);
          process.stderr.write(`spawn policy: ${status.spawnAdvice.level} · ${status.spawnAdvice.instruction}\n`);
        }
      } finally {
        await close();
      }
      return 0;
    }
    case 'compact': {
      const key = required(args[0], 'a session key: keel compact agent:main:main');
      const keepRecentTokens = parseCount('keep-recent', opts['keep-recent']);
      const { client, close } = await connectClient(configFromEnv());
      try {
        process.stderr.write(`compacting ${key}…\n`);
        const result = await forKnownSession(key, () => client.compact(key, { ...(keepRecentTokens !== undefined ? { keepRecentTokens } : {}), ...(opts.instructions ? { instructions: opts.instructions } : {}) }));
        print(result);
        if (!opts.json) process.stderr.write(`${result.status}${result.degraded ? ' (degraded: extractive summary)' : ''}: ${result.tokensBefore} → ${result.tokensAfter} tokens\n`);
      } finally {
        await close();
      }
      return 0;
    }
    case 'compactions': {
      const [sub, id] = args;
      if (sub === 'show') {
        print(await withStore((s) => compactionsShow({ db: s.db, id: required(id, 'a compaction id'), json: opts.json })));
        return 0;
      }
      if (sub === 'retry') {
        const settings = loadKeelSettings();
        const config = settings.defaults;
        const { client, close } = await connectClient(config);
        try {
          print(
            await withStore((s) =>
              compactionsRetry({ db: s.db, temporalClient: client.temporal, taskQueue: config.taskQueue, id: required(id, 'a compaction id'), contextWindowFor: (agentId) => configuredWindow(agentConfig(settings, agentId)).tokens, json: opts.json }),
            ),
          );
        } finally {
          await close();
        }
        return 0;
      }
      if (sub !== undefined) throw new UsageError(`unknown subcommand "compactions ${sub}"; use show or retry`);
      print(await withStore((s) => compactionsList({ db: s.db, failed: opts.failed, ...(opts.agent ? { agentId: opts.agent } : {}), json: opts.json })));
      return 0;
    }
    case 'import': {
      if (args.length === 0) throw new UsageError('name the files or folders to import: keel import ~/.openclaw/agents/main/sessions --agent main');
      const agent = required(opts.agent, '--agent: the agent that owns the imported sessions');
      const report = await withStore((s) => importCommand(s.db, agent, args, Boolean(opts.json)));
      print(report);
      return report.totals.failed > 0 ? 1 : 0;
    }
    case 'export': {
      const key = required(args[0], 'a session key: keel export agent:main:main --agent main');
      const agent = required(opts.agent, '--agent: the agent that owns the session');
      await withStore((s) => exportCommand(s.db, agent, key, opts.out));
      return 0;
    }
    case 'maintenance': {
      const report = await withStore((s) =>
        runMaintenance(s.db, {
          now: new Date(),
          mode: opts.enforce ? 'enforce' : 'warn',
          ...(opts['prune-days'] !== undefined ? { pruneAfterDays: parseCount('prune-days', opts['prune-days']) } : {}),
          ...(opts['max-entries'] !== undefined ? { maxEntries: parseCount('max-entries', opts['max-entries']) } : {}),
          ...(opts.agent ? { agentId: opts.agent } : {}),
        }),
      );
      print(report);
      if (!opts.json) {
        const verb = report.mode === 'enforce' ? 'pruned' : 'would prune';
        process.stderr.write(`${verb} ${report.sessionsPruned.length} sessions; ${report.mode === 'enforce' ? 'removed' : 'would remove'} ${report.entriesCapped.reduce((n, c) => n + c.removed, 0)} entries from ${report.entriesCapped.length} sessions\n`);
      }
      return 0;
    }
    case 'agents':
      print(agentsCommand(loadKeelSettings(), Boolean(opts.json)));
      return 0;
    case 'session': {
      const [sub, key, model] = args;
      if (sub !== 'model') throw new UsageError(sub ? `unknown subcommand "session ${sub}"; use model` : 'name a subcommand: keel session model <sessionKey> [MODEL | --clear]');
      const sessionKey = required(key, 'a session key: keel session model agent:main:main claude-opus-4-1');
      if (model !== undefined && opts.clear) throw new UsageError('give a model or --clear, not both');
      const settings = loadKeelSettings();
      print(await withStore((s) => sessionModelCommand(s.db, settings, { sessionKey, ...(model !== undefined ? { model } : {}), clear: Boolean(opts.clear), ...(opts.agent ? { defaultAgentId: opts.agent } : {}), json: Boolean(opts.json) })));
      return 0;
    }
    case 'subagents': {
      const [sub, id, ...words] = args;
      if (sub === undefined || sub === 'list') {
        print(await withStore((s) => subagentsList({ db: s.db, ...(opts.parent ? { parentSessionKey: opts.parent } : {}), ...(opts.agent ? { agentId: opts.agent } : {}), json: Boolean(opts.json) })));
        return 0;
      }
      if (sub !== 'kill' && sub !== 'steer') throw new UsageError(`unknown subcommand "subagents ${sub}"; use kill or steer`);
      const runId = required(id, `a subagent id: keel subagents ${sub} <id>${sub === 'steer' ? ' TEXT' : ''}`);
      const config = configFromEnv();
      const { client, close } = await connectClient(config);
      try {
        const sessions = createSessionSignals(client.temporal.connection, config.temporalNamespace, config.taskQueue);
        const text = sub === 'steer' ? required(words.join(' ').trim() || undefined, 'the message: keel subagents steer <id> TEXT') : '';
        const result = await withStore(async (s): Promise<{ done: boolean }> => {
          if (sub === 'kill') {
            const r = await subagentsKill({ db: s.db, sessions, id: runId });
            return { ...r, done: r.killed };
          }
          const r = await subagentsSteer({ db: s.db, sessions, id: runId, text });
          return { ...r, done: r.sent };
        });
        print(result);
        return result.done ? 0 : 1;
      } finally {
        await close();
      }
    }
    case 'migrate':
      await withStore(async () => undefined);
      process.stderr.write('migrated\n');
      return 0;
    case 'temporal-cli': {
      const cli = await resolveTemporalCli();
      if (cli.source === 'download') return 1;
      process.stdout.write(`${cli.path}\n`);
      return 0;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

/** Runs `keel <argv>` and exits the process with its code (0 ok, 1 failure, 2 bad usage). */
export function runKeelCli(argv: string[], roots: CliRoots): void {
  main(argv, roots).then(
    (code) => process.exit(code),
    (err) => {
      const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      process.stderr.write(`keel: ${err instanceof Error ? err.message : String(err)}\n`);
      if (usage) process.stderr.write(`${USAGE}\n`);
      process.exit(usage ? 2 : 1);
    },
  );
}
