/**
 * A session's jobs besides the turn: a compaction (the memory flush first, then the compaction
 * child), the soft-threshold flush, and a subagent's announce to its parent. The loop
 * (`session-run.ts`) runs them between requests; a turn's steps (`session-steps.ts`) compact through
 * them too (preflight, overflow, pre-call check).
 */
import * as wf from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createMemoryActivities, MemoryFlushInput } from '../activities/memory-activities';
import type { createSubagentActivities, AnnounceResult } from '../activities/subagent-activities';
import {
  COMPACTION_WORKFLOW_TYPE,
  FailureTypes,
  compactionWorkflowId,
  type CompactRequest,
  type CompactionTriggerName,
  type CompactionWorkflowInput,
  type CompactionWorkflowResult,
  type SessionWorkflowInput,
  type SubagentAnswer,
} from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';
import type { SessionState } from './session-state';
import type { SessionContext } from './session-context';
import type { TurnProgress } from './turn-progress';
import { describeFailure } from './describe-failure';
import { localActivities } from './local-activities';

type MemoryActivities = ReturnType<typeof createMemoryActivities>;
type SubagentActivities = ReturnType<typeof createSubagentActivities>;

/** The jobs of a session's run over its context; see the module comment. */
export class SessionJobs {
  private readonly flush: MemoryActivities;
  private readonly announcer: SubagentActivities;
  private readonly input: SessionWorkflowInput;
  private readonly state: SessionState;

  constructor(private readonly ctx: SessionContext) {
    this.input = ctx.input;
    this.state = ctx.state;
    const tuning = ctx.input.tuning ?? {};
    // The flush is best effort: a bounded budget, then the compaction goes on without it.
    this.flush = wf.proxyActivities<MemoryActivities>({
      startToCloseTimeout: '10m',
      scheduleToCloseTimeout: tuning.memoryFlushBudgetMs ?? DEFAULTS.memoryFlushBudgetMs,
      heartbeatTimeout: tuning.modelHeartbeatTimeoutMs ?? DEFAULTS.modelHeartbeatTimeoutMs,
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
    });
    // An announce must reach the parent: retried while Temporal is away, for a day.
    this.announcer = wf.proxyActivities<SubagentActivities>({
      startToCloseTimeout: '1m',
      scheduleToCloseTimeout: '24h',
      retry: { initialInterval: '1s', maximumInterval: '60s' },
    });
  }

  /**
   * A subagent session reports its run to its parent: every answer of the run in the order it ran
   * them, or, when killed, the kill after the answers it had not told yet. The announce's key is the
   * run's first request (`killed` for a kill); `ended` says the run is over (`run` mode, or killed).
   */
  async announce(answers: readonly SubagentAnswer[], killed?: 'killed'): Promise<AnnounceResult> {
    const base = this.ctx.withIds({ now: now(), answers, ...(this.input.tuning ? { tuning: this.input.tuning } : {}) });
    if (killed)
      return this.announcer.announceToParent({
        ...base,
        key: 'killed',
        outcome: 'killed',
        error: 'killed before it finished',
      });
    const [first, last] = [answers[0], answers[answers.length - 1]];
    if (!first || !last) throw new Error('a subagent announced a run without answers');
    const key = first.key;
    if (last.outcome === 'done')
      return this.announcer.announceToParent({ ...base, key, outcome: 'done', replyEntryId: last.replyEntryId });
    return this.announcer.announceToParent({ ...base, key, outcome: 'failed', error: last.error });
  }

  /** A manual compaction between turns (`keel compact`). */
  async manualCompaction(request: CompactRequest): Promise<CompactionWorkflowResult> {
    const { sessionId } = await localActivities.beginCompaction(
      this.ctx.withIds({ now: now(), newSessionId: wf.uuid4() }),
    );
    const result = await this.compact(sessionId, 'manual', request);
    if (!result)
      throw wf.ApplicationFailure.nonRetryable(
        'a compaction of this session is already running; wait for it or retry it with `keel compactions retry`',
        FailureTypes.InvalidInput,
      );
    return result;
  }

  /** Threshold compaction decided after a turn: a failure is recorded on its row, never thrown into the session. */
  async thresholdCompaction(sessionId: string): Promise<void> {
    try {
      await this.compact(sessionId, 'threshold');
    } catch (err) {
      if (!(err instanceof wf.TemporalFailure)) throw err;
      wf.log.warn('threshold compaction failed; its row records why and an operator can retry it', {
        sessionKey: this.input.sessionKey,
        error: describeFailure(err),
      });
    }
  }

  /** The soft-threshold flush, after the reply was returned. */
  async softThresholdFlush(sessionId: string): Promise<void> {
    await this.safeFlush(sessionId, 'soft-threshold');
  }

  /** Memory flush (once per compaction cycle, decided by the activity), then the compaction child. */
  async compact(
    sessionId: string,
    trigger: CompactionTriggerName,
    request: CompactRequest = {},
    turn?: TurnProgress,
  ): Promise<CompactionWorkflowResult | undefined> {
    const flush = await this.safeFlush(sessionId, trigger === 'overflow' ? 'overflow' : 'compaction');
    const compactionInput: CompactionWorkflowInput = this.ctx.withIds({
      sessionId,
      trigger,
      compactionId: wf.uuid4(),
      contextWindowTokens: this.state.contextWindow,
      memoryFlush: flush,
      ...(request.keepRecentTokens !== undefined ? { keepRecentTokens: request.keepRecentTokens } : {}),
      ...overhead(this.state.promptOverheadTokens()),
      ...(request.instructions ? { instructions: request.instructions } : {}),
      // Inside a turn its task is summarized with the rest: the summary carries it verbatim.
      ...(turn ? { turnInProgress: { userEntryId: turn.userEntryId } } : {}),
      ...(this.input.tuning?.summarizeHeartbeatTimeoutMs
        ? { summarizeHeartbeatTimeoutMs: this.input.tuning.summarizeHeartbeatTimeoutMs }
        : {}),
    });
    try {
      const result = await wf.executeChild<(i: CompactionWorkflowInput) => Promise<CompactionWorkflowResult>>(
        COMPACTION_WORKFLOW_TYPE,
        {
          workflowId: compactionWorkflowId(this.input.agentId, this.input.sessionKey),
          args: [compactionInput],
        },
      );
      this.state.recordCompaction(result);
      return result;
    } catch (err) {
      // An operator-started compaction of this session is running: it covers this one.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
      throw err;
    }
  }

  /**
   * The memory flush never blocks or fails what follows it: its failure (a 529 storm past its budget,
   * an overflow) is recorded on the session and handed to the compaction row, and the caller goes on.
   * Returns what it did, in words for the compaction row.
   */
  private async safeFlush(sessionId: string, purpose: NonNullable<MemoryFlushInput['purpose']>): Promise<string> {
    try {
      const r = await this.flush.memoryFlush(this.ctx.withIds({ sessionId, flushId: wf.uuid4(), now: now(), purpose }));
      if (!r.ran) return `skipped: ${r.skipped ?? 'unknown'}`;
      return r.tailOnly ? `ran on the recent tail (${r.notes} notes)` : `ran (${r.notes} notes)`;
    } catch (err) {
      if (!(err instanceof wf.TemporalFailure) || wf.isCancellation(err)) throw err;
      const error = describeFailure(err);
      wf.log.warn('memory flush failed; going on without it', { sessionKey: this.input.sessionKey, error });
      await localActivities.recordFlushFailure(this.ctx.withIds({ error, now: now() }));
      return `failed: ${error}`;
    }
  }
}

/** Workflow time, ISO. */
export function now(): string {
  return new Date().toISOString();
}

/** The session's prompt overhead for the compaction input, when a call has measured it. */
function overhead(tokens: number | undefined): { promptOverheadTokens?: number } {
  return tokens !== undefined ? { promptOverheadTokens: tokens } : {};
}
