import type { Kysely } from 'kysely';
import type { Database } from '../store/schema';
import type { ModelClient } from '../model/model-client';
import type { KeelConfig } from '../config/keel-config';
import type { ToolRegistry } from '../tools/registry';
import type { AgentMessage } from '../context/types';
import type { CompactionHooks } from '../compaction/hooks';
import type { SessionRequest, SessionTuning, SteerAdmission } from '../protocol';
import type { KeelMetrics } from '../observability/metrics';
import type { Recall } from '../embeddings/recall-runtime';
import type { EngineSlots } from '../engine/engine-slots';

/**
 * What activities need from the worker: the database, the model, the config and the tools. Declared
 * in src/ so the runtime that builds it never imports activities/ (docs/architecture.md, "Layers").
 */
export interface ActivityDeps {
  readonly db: Kysely<Database>;
  readonly model: ModelClient;
  /** The summarizer's model when a separate compaction model is configured. */
  readonly compactionModel?: ModelClient;
  readonly config: KeelConfig;
  readonly tools: ToolRegistry;
  /** Token estimate of one message (gpt-tokenizer × 1.2). */
  readonly estimate: (message: AgentMessage) => number;
  /** before_compaction / after_compaction hooks of the embedding application. */
  readonly compactionHooks?: CompactionHooks;
  /** Hybrid recall's embedders and cached vectors; absent → history_search ranks by keywords only. */
  readonly recall?: Recall;
  /** The worker's context engines, one instance each for its lifetime; absent → the activities make their own. */
  readonly contextEngines?: EngineSlots;
  /** The worker's Prometheus series; absent → activities record nothing. */
  readonly metrics?: KeelMetrics;
  /**
   * The deps for one agent: its config section merged over the defaults, its model client and its
   * tools. Absent → every agent uses these deps. Activities go through `depsForAgent`.
   */
  readonly forAgent?: (agentId: string) => ActivityDeps;
  /** The worker's Temporal client, for what crosses sessions (subagent announces, steering, kill). */
  readonly sessions?: SessionSignals;
}

/** What activities may do to other sessions' workflows. */
export interface SessionSignals {
  /** Admits a request to a session, starting its workflow when none runs (Signal-with-Start: durable, in arrival order). */
  enqueue(
    target: { readonly agentId: string; readonly sessionKey: string; readonly tuning?: SessionTuning },
    request: SessionRequest,
  ): Promise<void>;
  /**
   * Steers a session by its `steer` Update: admitted, or refused once its subagent run has ended.
   * `startIfClosed` starts a closed workflow again (a `session` child after its idle close); without
   * it a closed workflow refuses the steer (a `run` child that ended).
   */
  steer(
    target: { readonly agentId: string; readonly sessionKey: string },
    request: SessionRequest,
    opts: { readonly startIfClosed: boolean },
  ): Promise<SteerAdmission>;
  /** Asks a workflow to cancel: true when a running workflow took the request, false when none runs (not started yet, or closed). */
  cancel(workflowId: string): Promise<boolean>;
}

/** The deps an activity uses for `agentId` (see `ActivityDeps.forAgent`). */
export function depsForAgent(deps: ActivityDeps, agentId: string): ActivityDeps {
  return deps.forAgent?.(agentId) ?? deps;
}
