import type { ActivityDeps } from '../src/runtime/deps';
import { runMaintenance } from '../src/store/maintenance';
import type { MaintenanceRunInput, MaintenanceRunSummary } from '../src/protocol';

/** Most session keys a summary lists; the counts are always complete. */
const SUMMARY_KEYS = 50;

/** Session maintenance as an activity: prune old sessions, cap entries (warn reports, enforce deletes). */
export function createMaintenanceActivities(deps: ActivityDeps) {
  async function maintainSessions(input: MaintenanceRunInput): Promise<MaintenanceRunSummary> {
    const report = await runMaintenance(deps.db, {
      now: new Date(input.now),
      mode: input.mode,
      ...(input.pruneAfterDays !== undefined ? { pruneAfterDays: input.pruneAfterDays } : {}),
      ...(input.maxEntries !== undefined ? { maxEntries: input.maxEntries } : {}),
      ...(input.agentId ? { agentId: input.agentId } : {}),
    });
    // The report can list thousands of sessions: the workflow gets counts and a sample, never all.
    return {
      mode: report.mode,
      sessionsPruned: report.sessionsPruned.length,
      transcriptsPruned: report.transcriptsPruned.length,
      entriesRemoved: report.entriesCapped.reduce((n, c) => n + c.removed, 0),
      sessionsCapped: report.entriesCapped.length,
      sampleKeys: report.sessionsPruned.slice(0, SUMMARY_KEYS).map((s) => `${s.agentId}/${s.sessionKey}`),
    };
  }
  return { maintainSessions };
}
