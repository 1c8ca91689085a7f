import type { Command } from 'commander';
import { runMaintenance, type MaintenanceReport } from '../../store/maintenance';
import { configFromEnv, countOf, printResult, say, withStore, type JsonOption } from './shared';

/**
 * `keel maintenance`: prune old sessions and those beyond the per-agent count, in the configured mode
 * unless told (enforce says what it will delete first); index imported entries.
 */
export function registerMaintenanceCommands(program: Command): void {
  program
    .command('maintenance')
    .description(
      'prune old sessions and those beyond the per-agent count (mode: maintenanceMode / KEEL_MAINTENANCE_MODE, default warn)',
    )
    .option('--enforce', 'delete, whatever the configured mode')
    .option('--warn', 'only report, whatever the configured mode')
    .option('--prune-days <n>', 'prune sessions not updated for this many days (0 disables)', countOf('--prune-days'))
    .option(
      '--max-sessions <n>',
      'sessions kept per agent, most recently updated first (0 disables)',
      countOf('--max-sessions'),
    )
    .option('--agent <id>', 'only this agent’s sessions')
    .option('--json', 'print the report on stdout')
    .action(
      async (
        opts: JsonOption & {
          enforce?: boolean;
          warn?: boolean;
          pruneDays?: number;
          maxSessions?: number;
          agent?: string;
        },
      ) => {
        const mode = opts.enforce ? 'enforce' : opts.warn ? 'warn' : configFromEnv().maintenanceMode;
        const report = await withStore((s) =>
          runMaintenance(
            s.db,
            {
              now: new Date(),
              mode,
              ...(opts.pruneDays !== undefined ? { pruneAfterDays: opts.pruneDays } : {}),
              ...(opts.maxSessions !== undefined ? { maxSessions: opts.maxSessions } : {}),
              ...(opts.agent ? { agentId: opts.agent } : {}),
            },
            // Said before anything goes.
            (plan) => say(`deleting: ${planLine(plan)}`),
          ),
        );
        printResult(opts, report);
        if (!opts.json) {
          say(
            report.mode === 'enforce'
              ? `deleted: ${planLine(report)}`
              : `would delete: ${planLine(report)} (warn mode: nothing deleted; --enforce or maintenanceMode "enforce" deletes)`,
          );
          if (report.entriesIndexed > 0) say(`indexed ${report.entriesIndexed} imported entries for history_search`);
        }
      },
    );
}

/** What a run deletes (or would), one line: sessions by reason, earlier transcripts, entries. */
function planLine(r: MaintenanceReport): string {
  const overCount = r.sessionsPruned.filter((s) => s.reason === 'count').length;
  const entries = [...r.sessionsPruned, ...r.transcriptsPruned].reduce((n, s) => n + s.entries, 0);
  const keys = r.sessionsPruned.slice(0, LISTED_KEYS).map((s) => `${s.agentId}/${s.sessionKey}`);
  const more = r.sessionsPruned.length - keys.length;
  return (
    `${r.sessionsPruned.length} sessions (${r.sessionsPruned.length - overCount} not updated for the prune days, ${overCount} beyond the per-agent count)` +
    (keys.length > 0 ? ` [${keys.join(', ')}${more > 0 ? `, and ${more} more (--json lists all)` : ''}]` : '') +
    ` and ${r.transcriptsPruned.length} earlier transcripts of kept sessions; ${entries} entries`
  );
}

/** Session keys a people-text line names; `--json` has them all. */
const LISTED_KEYS = 20;
