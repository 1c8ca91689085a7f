import type { Command } from 'commander';
import { runDoctor } from '../../operations/doctor/doctor';
import { shownKey } from '../../operations/shown-key';
import { workflowLookupFor } from '../workflow-lookup';
import { configFromEnv, countOf, printResult, say, withStore, type CliContext, type JsonOption } from './shared';

/** Minutes after which a `running` compaction row counts as stuck (a compaction takes minutes at most). */
const STUCK_AFTER_MINUTES = 60;

/** `keel doctor [--fix]`: check stored transcripts and repair what is safe. Exit 1 while fixable findings remain. */
export function registerDoctorCommands(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description(
      'check stored transcripts (tool pairing, parent chain, orphaned rows, counters, stuck compactions, work whose workflow is gone); --fix repairs what is safe',
    )
    .option('--fix', 'repair what can be repaired without losing anything, and say what was done')
    .option('--agent <id>', 'only this agent’s sessions')
    .option(
      '--stuck-minutes <n>',
      'a running compaction older than this is stuck',
      countOf('--stuck-minutes'),
      STUCK_AFTER_MINUTES,
    )
    .option('--json', 'print the report on stdout')
    .action(async (opts: JsonOption & { fix?: boolean; agent?: string; stuckMinutes: number }) => {
      const temporal = await workflowLookupFor(configFromEnv());
      const report = await withStore((s) =>
        runDoctor(s.db, {
          fix: Boolean(opts.fix),
          ...(opts.agent ? { agentId: opts.agent } : {}),
          stuckAfterMinutes: opts.stuckMinutes,
          now: new Date(),
          workflows: 'skipped' in temporal ? temporal : temporal.lookup,
        }),
      ).finally(() => ('close' in temporal ? temporal.close() : undefined));
      // Which cluster, namespace, TLS and credentials doctor reached: the first thing to check on a new deployment.
      const connection =
        'skipped' in temporal
          ? { connected: false, reason: temporal.skipped }
          : { connected: true, connection: temporal.connection };
      printResult(opts, { ...report, temporal: connection });
      if (!opts.json) {
        say(
          'connection' in connection
            ? `temporal  connected to ${connection.connection}`
            : `temporal  not connected: ${connection.reason}`,
        );
        for (const f of report.findings)
          say(
            `${f.repair.padEnd(9)} ${f.check}  ${f.agentId} ${f.sessionKey ? shownKey(f.sessionKey) : '-'} (session ${f.sessionId}): ${f.detail}`,
          );
        for (const s of report.skipped) say(`skipped   ${s}`);
        say(
          report.findings.length === 0
            ? 'no problems found'
            : `${report.findings.length} findings; ${opts.fix ? `fixed ${report.fixed}` : `${report.fixable} fixable with keel doctor --fix`}`,
        );
      }
      if (report.fixable > 0) ctx.exitCode = 1;
    });
}
