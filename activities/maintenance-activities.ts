import type { ActivityDeps } from '../src/runtime/deps';
import { runMaintenance } from '../src/store/maintenance';
import type { MaintenanceRunInput, MaintenanceRunSummary } from '../src/protocol';

/** Most session keys a summary lists; the counts are always complete. */
const SUMMARY_KEYS = 50;

/** Session maintenance as an activity: prune old sessions, cap entries (warn reports, enforce deletes), index imported entries. */
export function createMaintenanceActivities(deps: ActivityDeps) {
  async function maintainSessions(input: MaintenanceRunInput): Promise<MaintenanceRunSummary> {
    const run = (agentId: string | undefined) =>
      runMaintenance(deps.db, {
        now: new Date(input.now),
        mode: input.mode,
        ...(input.pruneAfterDays !== undefined ? { pruneAfterDays: input.pruneAfterDays } : {}),
        ...(input.maxEntries !== undefined ? { maxEntries: input.maxEntries } : {}),
        ...(agentId ? { agentId } : {}),
      });
    // A worker limited to some agents (KEEL_ALLOWED_AGENTS) maintains theirs only, never a shared database's others.
    const agents = input.agentId ? [input.agentId] : (deps.config.allowedAgents ?? [undefined]);
    const reports = [];
    for (const agentId of agents) reports.push(await run(agentId));
    const pruned = reports.flatMap((r) => r.sessionsPruned);
    const capped = reports.flatMap((r) => r.entriesCapped);
    // The report can list thousands of sessions: the workflow gets counts and a sample, never all.
    return {
      mode: reports[0]!.mode,
      sessionsPruned: pruned.length,
      transcriptsPruned: reports.reduce((n, r) => n + r.transcriptsPruned.length, 0),
      entriesRemoved: capped.reduce((n, c) => n + c.removed, 0),
      sessionsCapped: capped.length,
      entriesIndexed: reports.reduce((n, r) => n + r.entriesIndexed, 0),
      sampleKeys: pruned.slice(0, SUMMARY_KEYS).map((s) => `${s.agentId}/${s.sessionKey}`),
    };
  }
  return { maintainSessions };
}
