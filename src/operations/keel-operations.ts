/**
 * The operator's core as one object: everything `keel` does to sessions, compactions, approvals,
 * subagents and the store (doctor, maintenance), what-if replays, and the console's reads, built once from a store, a `KeelClient` and the settings. The
 * command line, the HTTP API and the console present these views; a team builds its own console on
 * the same object.
 */
import type { Kysely } from 'kysely';
import type { KeelClient } from '../client/keel-client';
import { createSessionSignals } from '../client/session-signals';
import type { KeelSettings } from '../config/agent-config';
import { agentConfig } from '../config/agent-config';
import { configuredWindow } from '../config/configured-window';
import type { SessionSignals } from '../runtime/deps';
import type { Database } from '../store/schema';
import { decideApproval, listApprovals, type DecisionInput } from './approvals/approvals';
import { rerunCompaction, revertCompaction, type RerunInput } from './compactions/compaction-edits';
import {
  listCompactions,
  retryCompaction,
  showCompaction,
  type CompactionRef,
  type CompactionsListInput,
  type CompactionWorkflowDeps,
} from './compactions/compactions';
import { compareCompactions } from './compactions/compare-compactions';
import { sessionCompactions } from './compactions/session-compactions';
import { fleetOverview } from './fleet/fleet-overview';
import { fleetPage } from './fleet/fleet-page';
import { contextSeries } from './sessions/context-series';
import { listSessions, type SessionsListOptions } from './sessions/list-sessions';
import { sessionStatusReport } from './sessions/session-status';
import { sessionThinking } from './sessions/session-thinking';
import type { ThinkingLevel } from '../turn/thinking-level';
import { killSubagentRun, listSubagents, steerSubagentRun, type SubagentRef } from './subagents/subagents';
import { transcriptPage } from './transcripts/transcript-page';
import { importTranscripts, type ImportInput } from './transcripts/import-transcripts';
import {
  exportAllTranscripts,
  exportTranscript,
  type ExportAllInput,
  type ExportInput,
} from './transcripts/export-transcripts';
import { whatIfReplay } from './replay/what-if-replay';
import { runDoctor, type DoctorOptions } from './doctor/doctor';
import { runMaintenance, type MaintenanceOptions } from '../store/maintenance';

/** What the operations work with; a process opens them once (`keel serve`, `keel dev`, a team's own server). */
export interface KeelOperationsDeps {
  /** Turns, status and compaction by Temporal (its `temporal` client starts compaction edits). */
  readonly client: KeelClient;
  /** Sessions, transcripts and compaction records. */
  readonly db: Kysely<Database>;
  /** The agents' settings: windows, models and the task queue. */
  readonly settings: KeelSettings;
}

/** A page of rows: `page` from 1, `pageSize` rows each. */
export interface PageInput {
  readonly page: number;
  readonly pageSize: number;
}

/**
 * The operations by noun. Each method takes an input and returns the view its presenters print (the
 * zod schemas in `*-views.ts`); refusals are the `OperationError`s of `errors.ts`.
 *
 * @example
 * const ops = new KeelOperations({ client, db: store.db, settings: loadKeelSettings() });
 * const { sessions } = await ops.sessions.list({ agentId: 'main' });
 * const { compactions } = await ops.compactions.list({ agentId: 'main', failed: true });
 * await ops.compactions.retry({ agentId: 'main', id: compactions[0]!.id });
 */
export class KeelOperations {
  private readonly workflows: CompactionWorkflowDeps;
  private signals: SessionSignals | undefined;

  constructor(private readonly deps: KeelOperationsDeps) {
    this.workflows = {
      db: deps.db,
      temporalClient: deps.client.temporal,
      taskQueue: deps.settings.defaults.taskQueue,
      contextWindowFor: (agentId) => configuredWindow(agentConfig(deps.settings, agentId)).tokens,
    };
  }

  /** `keel sessions` and `keel status`: the fleet's rows, one session's figures, a session's context over time. */
  readonly sessions = {
    list: async (input: SessionsListOptions = {}) => ({
      sessions: await listSessions(this.deps.db, this.deps.settings, input),
    }),
    status: (input: { readonly sessionKey: string }) =>
      sessionStatusReport(this.deps.client, input.sessionKey, this.deps.settings, (fn) => fn(this.deps.db)),
    contextSeries: (input: { readonly agentId: string; readonly sessionId: string }) =>
      contextSeries(this.deps.db, input.agentId, input.sessionId),
    /** Shows, sets or (`null`) clears the session's thinking level. */
    thinking: (input: { readonly sessionKey: string; readonly level?: ThinkingLevel | null }) =>
      sessionThinking(this.deps.db, this.deps.settings, {
        ...input,
        agentId: this.deps.client.identify(input.sessionKey).agentId,
      }),
  };

  /** `keel compactions`: list, show, retry, revert, rerun, compare, and a session's with their summaries. */
  readonly compactions = {
    list: (input: CompactionsListInput = {}) => listCompactions(this.deps, input),
    show: (ref: CompactionRef) => showCompaction(this.deps, ref),
    retry: (ref: CompactionRef) => retryCompaction(this.workflows, ref),
    revert: (ref: CompactionRef) => revertCompaction(this.workflows, ref),
    rerun: (input: RerunInput) => rerunCompaction(this.workflows, input),
    compare: (input: { readonly agentId: string; readonly a: string; readonly b: string }) =>
      compareCompactions(this.deps, input),
    ofSession: (input: { readonly agentId: string; readonly sessionKey: string }) =>
      sessionCompactions(this.deps, input),
  };

  /** `keel approvals`, `keel approve`, `keel deny`. */
  readonly approvals = {
    list: (input: { readonly agentId?: string | undefined } = {}) => listApprovals(this.deps, input),
    decide: (input: DecisionInput) => decideApproval(this.deps, input),
  };

  /** `keel subagents`, `kill`, `steer`. */
  readonly subagents = {
    list: (input: { readonly parentSessionKey?: string | undefined; readonly agentId?: string | undefined } = {}) =>
      listSubagents(this.deps, input),
    kill: (ref: SubagentRef) => killSubagentRun({ db: this.deps.db, sessions: this.sessionSignals() }, ref),
    steer: (input: SubagentRef & { readonly text: string }) =>
      steerSubagentRun({ db: this.deps.db, sessions: this.sessionSignals() }, input),
  };

  /** The console's fleet: a page of sessions, and the charts over them. */
  readonly fleet = {
    page: (input: SessionsListOptions & PageInput) => {
      const { page, pageSize, ...filter } = input;
      return fleetPage(this.deps.db, this.deps.settings, filter, page, pageSize);
    },
    overview: (input: { readonly agentIds?: readonly string[] | undefined } = {}) =>
      fleetOverview(this.deps.db, this.deps.settings, input.agentIds),
  };

  /** `keel import` and `keel export` (to a sink the caller opens), and a transcript by pages, oldest first. */
  readonly transcripts = {
    import: (input: ImportInput) => importTranscripts(this.deps, input),
    export: (input: ExportInput) => exportTranscript(this.deps, input),
    exportAll: (input: ExportAllInput) => exportAllTranscripts(this.deps, input),
    page: (input: { readonly agentId: string; readonly sessionId: string } & PageInput) =>
      transcriptPage(this.deps.db, input.agentId, input.sessionId, input.page, input.pageSize),
  };

  /** `keel replay` as the console runs it: the session under its policy and an edited one, read-only. */
  readonly replay = {
    whatIf: (input: { readonly sessionKey: string; readonly policy: unknown }) => whatIfReplay(this.deps, input),
  };

  /** `keel doctor [--fix]`: what the database holds checked against the runtime's rules, repaired idempotently. */
  readonly doctor = {
    check: (input: DoctorOptions) => runDoctor(this.deps.db, input),
  };

  /** `keel maintenance`: old sessions pruned and long transcripts capped (warn mode reports only). */
  readonly maintenance = {
    run: (input: MaintenanceOptions) => runMaintenance(this.deps.db, input),
  };

  /** The signals that reach a subagent run's session, made on first use (listing needs none). */
  private sessionSignals(): SessionSignals {
    const temporal = this.deps.client.temporal;
    this.signals ??= createSessionSignals(
      temporal.connection,
      temporal.options.namespace,
      this.deps.settings.defaults.taskQueue,
      temporal.options.dataConverter,
    );
    return this.signals;
  }
}
