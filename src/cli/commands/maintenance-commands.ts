import type { Command } from 'commander';
import { runMaintenance } from '../../store/maintenance';
import { configFromEnv, countOf, printResult, say, withStore, type JsonOption } from './shared';

/** `keel maintenance`: prune old sessions and cap long transcripts, in the configured mode unless told; index imported entries. */
export function registerMaintenanceCommands(program: Command): void {
  program
    .command('maintenance')
    .description(
      'prune old sessions and cap long transcripts (mode: maintenanceMode / KEEL_MAINTENANCE_MODE, default warn)',
    )
    .option('--enforce', 'delete, whatever the configured mode')
    .option('--warn', 'only report, whatever the configured mode')
    .option('--prune-days <n>', 'prune sessions not updated for this many days (0 disables)', countOf('--prune-days'))
    .option('--max-entries <n>', 'entries kept per transcript (0 disables)', countOf('--max-entries'))
    .option('--agent <id>', 'only this agent’s sessions')
    .option('--json', 'print the report on stdout')
    .action(
      async (
        opts: JsonOption & {
          enforce?: boolean;
          warn?: boolean;
          pruneDays?: number;
          maxEntries?: number;
          agent?: string;
        },
      ) => {
        const mode = opts.enforce ? 'enforce' : opts.warn ? 'warn' : configFromEnv().maintenanceMode;
        const report = await withStore((s) =>
          runMaintenance(s.db, {
            now: new Date(),
            mode,
            ...(opts.pruneDays !== undefined ? { pruneAfterDays: opts.pruneDays } : {}),
            ...(opts.maxEntries !== undefined ? { maxEntries: opts.maxEntries } : {}),
            ...(opts.agent ? { agentId: opts.agent } : {}),
          }),
        );
        printResult(opts, report);
        if (!opts.json) {
          const enforce = report.mode === 'enforce';
          say(
            `${enforce ? 'pruned' : 'would prune'} ${report.sessionsPruned.length} sessions and ${report.transcriptsPruned.length} earlier transcripts of kept sessions; ${enforce ? 'removed' : 'would remove'} ${report.entriesCapped.reduce((n, c) => n + c.removed, 0)} entries from ${report.entriesCapped.length} sessions${enforce ? '' : ' (warn mode: nothing deleted; --enforce or maintenanceMode "enforce" deletes)'}`,
          );
          if (report.entriesIndexed > 0) say(`indexed ${report.entriesIndexed} imported entries for history_search`);
        }
      },
    );
}
