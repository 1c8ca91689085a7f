/**
 * A session's jobs besides the turn: a compaction (the memory flush first, then the compaction
 * child), the soft-threshold flush, and a subagent's announce to its parent. The loop
 * (`session-run.ts`) runs them between requests; a turn's steps (`session-steps.ts`) compact through
 * them too (preflight, overflow, pre-call check).
 */
import * as wf from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
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
import type { SessionState } from './session-state';
import type { SessionContext } from './session-context';
import type { TurnProgress } from './turn-progress';
import { describeFailure } from './describe-failure';
import { localActivities } from './local-activities';
import { MemoryFlush, type FlushPurpose } from './memory-flush';

type SubagentActivities = ReturnType<typeof createSubagentActivities>;

/** The jobs of a session's run over its context; see the module comment. */
export class SessionJobs {
  private readonly flush: MemoryFlush;
  private readonly announcer: SubagentActivities;
  private readonly input: SessionWorkflowInput;
  private readonly state: SessionState;

  constructor(private readonly ctx: SessionContext) {
    this.input = ctx.input;
    this.state = ctx.state;
    this.flush = new MemoryFlush(ctx.ids, ctx.input.tuning);
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

  /**
   * Starts a compaction beside the session and returns once it has started: the session answers its
   * next turns meanwhile, and the compaction signals the run when it lands. Nothing when one runs
   * already, or when another compaction of the session (an operator's) holds the compaction id.
   */
  async startBeside(sessionId: string, trigger: 'soft' | 'idle'): Promise<void> {
    if (this.ctx.background.isRunning()) return;
    const input = this.compactionInput(sessionId, trigger, {
      background: {
        sessionWorkflowId: wf.workflowInfo().workflowId,
        ...(this.input.tuning ? { tuning: this.input.tuning } : {}),
      },
    });
    try {
      await wf.startChild<(i: CompactionWorkflowInput) => Promise<CompactionWorkflowResult>>(COMPACTION_WORKFLOW_TYPE, {
        workflowId: compactionWorkflowId(this.input.agentId, this.input.sessionKey),
        args: [input],
        // It outlives this run: a continue-as-new hands it on, and it signals whichever run is current.
        parentClosePolicy: wf.ParentClosePolicy.ABANDON,
      });
      this.ctx.background.started({ compactionId: input.compactionId, trigger, startedAt: now() });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  /**
   * The context reached the hard limit while a compaction runs beside the session: the session waits
   * for it (status says so), and returns its landing. Nothing when none runs.
   */
  private async waitForBeside(): Promise<CompactionWorkflowResult | undefined> {
    const beside = this.ctx.background;
    if (!beside.isRunning()) return undefined;
    beside.waiting(Date.now());
    wf.log.info('the context reached the hard limit; waiting for the compaction running beside the session', {
      sessionKey: this.input.sessionKey,
    });
    await wf.condition(() => !beside.isRunning());
    const landed = beside.takeLanded();
    return landed && 'result' in landed ? landed.result : undefined;
  }

  /**
   * Memory flush (once per compaction cycle, decided by the activity), then the compaction child. A
   * compaction running beside the session is waited for first; when it wrote a summary, it is this
   * compaction (an operator's manual one still runs after it, on what is left).
   */
  async compact(
    sessionId: string,
    trigger: CompactionTriggerName,
    request: CompactRequest = {},
    turn?: TurnProgress,
  ): Promise<CompactionWorkflowResult | undefined> {
    const beside = await this.waitForBeside();
    if (beside?.entryId && trigger !== 'manual') return beside;
    const flush = await this.safeFlush(sessionId, trigger === 'overflow' ? 'overflow' : 'compaction');
    const compactionInput = this.compactionInput(sessionId, trigger, {
      memoryFlush: flush,
      ...(request.keepRecentTokens !== undefined ? { keepRecentTokens: request.keepRecentTokens } : {}),
      ...(request.instructions ? { instructions: request.instructions } : {}),
      // Inside a turn its task is summarized with the rest: the summary carries it verbatim.
      ...(turn ? { turnInProgress: { userEntryId: turn.userEntryId } } : {}),
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

  /** A compaction's input for this session now: its ids, window and prompt overhead, then the caller's fields. */
  private compactionInput(
    sessionId: string,
    trigger: CompactionTriggerName,
    fields: Partial<CompactionWorkflowInput>,
  ): CompactionWorkflowInput {
    return this.ctx.withIds({
      sessionId,
      trigger,
      compactionId: wf.uuid4(),
      contextWindowTokens: this.state.contextWindow,
      ...overhead(this.state.promptOverheadTokens()),
      ...(this.input.tuning?.summarizeHeartbeatTimeoutMs
        ? { summarizeHeartbeatTimeoutMs: this.input.tuning.summarizeHeartbeatTimeoutMs }
        : {}),
      ...fields,
    });
  }

  private safeFlush(sessionId: string, purpose: FlushPurpose): Promise<string> {
    return this.flush.run(sessionId, purpose);
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
