import { runningTurnLine } from '../../turn/run-budget';
import { backgroundCompactionLine } from '../../compaction/background-line';
import type { Command } from 'commander';
import { loadKeelSettings } from '../../config/agent-config';
import { connectClient, UsageError } from '../connect';
import { forKnownSession } from '../../operations/sessions/session-errors';
import { contextBar, contextSplitBar } from '../context-bar';
import { promptCacheLine } from '../prompt-cache-line';
import { sessionModelCommand } from '../agents';
import { listSessions } from '../../operations/sessions/list-sessions';
import { renderSessions } from '../sessions-list';
import { sessionStatusReport } from '../../operations/sessions/session-status';
import { shownKey } from '../../operations/shown-key';
import { configFromEnv, countOf, printResult, say, withStore, type CliContext, type JsonOption } from './shared';
import type { SessionStatus } from '../../protocol';
import { compactionOutcomeLine } from '../compaction-outcome';
import { DEFAULTS } from '../../config/defaults';
import { watchRetries } from '../chat-watch';
import { parseSessionKey } from '../../sessions/session-key';
import { sessionThinking } from '../../operations/sessions/session-thinking';
import { isThinkingLevel, THINKING_LEVELS } from '../../turn/thinking-level';

/** `keel sessions`, `keel status`, `keel compact`, `keel session model`: one session at a time, or all of them. */
export function registerSessionCommands(program: Command, ctx: CliContext): void {
  program
    .command('sessions')
    .description('every session: key, agent, session id, updated, turns, context usage, pressure, compactions, model')
    .option('--agent <id>', 'only this agent’s sessions')
    .option('--active <minutes>', 'only sessions updated within this many minutes', countOf('--active'))
    .option('--json', 'print { sessions } on stdout')
    .action(async (opts: JsonOption & { agent?: string; active?: number }) => {
      const settings = loadKeelSettings();
      const sessions = await withStore((s) =>
        listSessions(s.db, settings, {
          ...(opts.agent ? { agentId: opts.agent } : {}),
          ...(opts.active !== undefined ? { activeMinutes: opts.active } : {}),
        }),
      );
      printResult(opts, { sessions });
      if (!opts.json) renderSessions(sessions, say);
    });

  program
    .command('status')
    .description(
      'context usage, pressure, compactions and prompt-cache hit rate of a session (TEMPORAL_ADDRESS, else the running `keel dev`)',
    )
    .argument('<sessionKey>', 'e.g. agent:main:main')
    .option('--json', 'print the status object on stdout')
    .action(async (key: string, opts: JsonOption) => {
      parseSessionKey(key);
      const { client, close } = await connectClient(configFromEnv());
      try {
        const status = await sessionStatusReport(client, key, loadKeelSettings(), (fn) => withStore((s) => fn(s.db)));
        const { turns, compactionNote, compactionBilling, windowNote, workflowNote } = status;
        printResult(opts, status);
        if (!opts.json) {
          say(`${shownKey(key)}\n${contextBar(status)}`);
          if (windowNote) say(windowNote);
          if (status.contextSplit) say(contextSplitBar(status.contextSplit, status.contextWindow));
          say(
            `turns ${turns ?? '?'} · compactions ${status.compactionCount}${status.lastCompactionId ? ` (last ${status.lastCompactionId})` : ''} · queued ${status.queuedTurns}${status.model ? ` · model ${status.model}` : ''}`,
          );
          if (status.promptCache) say(promptCacheLine(status.promptCache));
          if (status.spawnAdvice) say(`spawn policy: ${status.spawnAdvice.level} · ${status.spawnAdvice.instruction}`);
          if (status.autoCompaction) say(autoCompactionLine(key, status.autoCompaction));
          if (status.runningTurn) say(runningTurnLine(status.runningTurn));
          if (status.backgroundCompaction) say(backgroundCompactionLine(status.backgroundCompaction));
          for (const a of status.pendingApprovals ?? [])
            say(`waiting for approval: ${a.toolName} ${a.approvalId} (until ${a.deadline}; keel approve/deny <id>)`);
          if (compactionBilling) say(compactionBilling);
          if (compactionNote) say(compactionNote);
          if (workflowNote) say(workflowNote);
          if (status.recall) say(status.recall);
        }
      } finally {
        await close();
      }
    });

  program
    .command('compact')
    .description('compact a session now and wait for the outcome (TEMPORAL_ADDRESS, else the running `keel dev`)')
    .argument('<sessionKey>', 'e.g. agent:main:main')
    .option('--keep-recent <tokens>', 'recent tokens kept verbatim', countOf('--keep-recent'))
    .option('--instructions <text>', 'what the summary should focus on')
    .option('--json', 'print the compaction result on stdout')
    .action(async (key: string, opts: JsonOption & { keepRecent?: number; instructions?: string }) => {
      // A bad key is refused before anything is said or connected.
      parseSessionKey(key);
      const { client, close } = await connectClient(configFromEnv());
      try {
        say(`compacting ${shownKey(key)}…`);
        // Behind a turn whose step keeps failing, the wait is said, not silent.
        const retries = watchRetries(client, key, say);
        const result = await forKnownSession(key, () =>
          client.compact(key, {
            ...(opts.keepRecent !== undefined ? { keepRecentTokens: opts.keepRecent } : {}),
            ...(opts.instructions ? { instructions: opts.instructions } : {}),
          }),
        ).finally(() => retries.stop());
        printResult(opts, result);
        if (!opts.json) say(compactionOutcomeLine(result));
        // Nothing was compacted: not a success.
        if (result.status === 'skipped') ctx.exitCode = 1;
      } finally {
        await close();
      }
    });

  const session = program.command('session').description('one session’s settings');
  session
    .command('model')
    .description('show, set or clear a session’s model')
    .argument('<sessionKey>', 'e.g. agent:main:main')
    .argument('[model]', 'the model the session’s turns call from now on')
    .option('--clear', 'follow the agent’s model again')
    .option('--agent <id>', 'the agent, when the key does not name one')
    .option('--json', 'print the report on stdout')
    .action(
      async (sessionKey: string, model: string | undefined, opts: JsonOption & { clear?: boolean; agent?: string }) => {
        if (model !== undefined && opts.clear) throw new UsageError('give a model or --clear, not both');
        const settings = loadKeelSettings();
        printResult(
          opts,
          await withStore((s) =>
            sessionModelCommand(s.db, settings, {
              sessionKey,
              ...(model !== undefined ? { model } : {}),
              clear: Boolean(opts.clear),
              ...(opts.agent ? { defaultAgentId: opts.agent } : {}),
              json: Boolean(opts.json),
            }),
          ),
        );
      },
    );
  session
    .command('thinking')
    .description('show, set or clear how hard a session’s turns think')
    .argument('<sessionKey>', 'e.g. agent:main:main')
    .argument('[level]', `one of ${THINKING_LEVELS.join(', ')}`)
    .option('--clear', 'follow the agent’s thinkingLevel again')
    .option('--agent <id>', 'the agent, when the key does not name one')
    .option('--json', 'print the report on stdout')
    .action(
      async (sessionKey: string, level: string | undefined, opts: JsonOption & { clear?: boolean; agent?: string }) => {
        if (level !== undefined && opts.clear) throw new UsageError('give a level or --clear, not both');
        if (level !== undefined && !isThinkingLevel(level))
          throw new UsageError(`level: "${level}" is not one of ${THINKING_LEVELS.join(', ')}`);
        const settings = loadKeelSettings();
        const agentId = parseSessionKey(sessionKey).agentId ?? opts.agent ?? 'main';
        const report = await withStore((s) =>
          sessionThinking(s.db, settings, {
            agentId,
            sessionKey,
            ...(opts.clear ? { level: null } : level !== undefined ? { level } : {}),
          }),
        );
        if (!opts.json)
          say(
            `${shownKey(sessionKey)}: thinking ${report.level}${report.source === 'session' ? ' (session level)' : ` (agent ${agentId}'s level)`}`,
          );
        printResult(opts, report);
      },
    );
}

/** Why threshold compaction is not running as usual, and what to do about it. */
function autoCompactionLine(key: string, auto: NonNullable<SessionStatus['autoCompaction']>): string {
  if (auto.state === 'paused') {
    return `auto-compaction paused after ${DEFAULTS.maxConsecutiveCompactionFailures} failed compactions in a row: see \`keel compactions --failed\`, then \`keel compact ${shownKey(key)}\` (a success resumes it)`;
  }
  return `auto-compaction held: the last compaction freed too little; the next one waits until ${auto.untilTokens.toLocaleString('en-US')} context tokens (KEEL_COMPACTION_MIN_RECLAIM)`;
}
