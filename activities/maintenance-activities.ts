import { log } from '@temporalio/activity';
import type { ActivityDeps } from '../src/runtime/deps';
import { runMaintenance } from '../src/store/maintenance';
import type { MaintenanceRunInput, MaintenanceRunSummary } from '../src/protocol';

/** Most session keys a summary lists; the counts are always complete. */
const SUMMARY_KEYS = 50;

/**
 * Session maintenance as an activity: prune old sessions and those beyond the per-agent count (warn
 * reports, enforce deletes after logging what it will delete), index imported entries.
 */
export function createMaintenanceActivities(deps: ActivityDeps) {
  async function maintainSessions(input: MaintenanceRunInput): Promise<MaintenanceRunSummary> {
    const run = (agentId: string | undefined) =>
      runMaintenance(
        deps.db,
        {
          now: new Date(input.now),
          mode: input.mode,
          ...(input.pruneAfterDays !== undefined ? { pruneAfterDays: input.pruneAfterDays } : {}),
          ...(input.maxSessions !== undefined ? { maxSessions: input.maxSessions } : {}),
          ...(agentId ? { agentId } : {}),
        },
        (plan) => {
          // Said before anything goes: what enforce is about to delete, as warn mode reports it.
          const pruned = plan.sessionsPruned;
          log.warn('maintenance: deleting', {
            agentId,
            sessions: pruned.length,
            overCount: pruned.filter((s) => s.reason === 'count').length,
            transcripts: plan.transcriptsPruned.length,
            entries: [...pruned, ...plan.transcriptsPruned].reduce((n, s) => n + s.entries, 0),
            sampleKeys: pruned.slice(0, SUMMARY_KEYS).map((s) => `${s.agentId}/${s.sessionKey}`),
          });
        },
      );
    // A worker limited to some agents (KEEL_ALLOWED_AGENTS) maintains theirs only, never a shared database's others.
    const agents = input.agentId ? [input.agentId] : (deps.config.allowedAgents ?? [undefined]);
    const reports = [];
    for (const agentId of agents) reports.push(await run(agentId));
    const pruned = reports.flatMap((r) => r.sessionsPruned);
    const transcripts = reports.flatMap((r) => r.transcriptsPruned);
    // The report can list thousands of sessions: the workflow gets counts and a sample, never all.
    return {
      mode: reports[0]!.mode,
      sessionsPruned: pruned.length,
      transcriptsPruned: transcripts.length,
      sessionsOverCount: pruned.filter((s) => s.reason === 'count').length,
      entriesRemoved: [...pruned, ...transcripts].reduce((n, s) => n + s.entries, 0),
      entriesIndexed: reports.reduce((n, r) => n + r.entriesIndexed, 0),
      sampleKeys: pruned.slice(0, SUMMARY_KEYS).map((s) => `${s.agentId}/${s.sessionKey}`),
    };
  }
  return { maintainSessions };
}
