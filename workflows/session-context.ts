import * as wf from '@temporalio/workflow';
import type { SessionWorkflowInput } from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';
import { SessionState } from './session-state';
import { ApprovalBook } from './approval-book';
import { CompactionBeside } from './background-compaction';

/** The session an activity works on: every activity input starts with these. */
export interface SessionIds {
  readonly agentId: string;
  readonly sessionKey: string;
}

/**
 * What every step of one run of a session reads: its input, its state, its approval book, and when
 * the run must hand on to the next (continue-as-new). One object, built once per run and passed to
 * the steps and the loop, in place of each threading its own copies.
 */
export class SessionContext {
  readonly state: SessionState;
  readonly approvals = new ApprovalBook();
  /** The compaction running beside the session, if any. */
  readonly background: CompactionBeside;
  readonly ids: SessionIds;
  private readonly maxTurnsPerRun: number;

  constructor(readonly input: SessionWorkflowInput) {
    this.state = new SessionState(input);
    this.background = new CompactionBeside(input.carried?.backgroundCompaction);
    this.ids = { agentId: input.agentId, sessionKey: input.sessionKey };
    this.maxTurnsPerRun = input.tuning?.maxTurnsPerRun ?? DEFAULTS.maxTurnsPerRun;
  }

  /** The run has grown enough to hand on: Temporal suggests it, or its turn count reached `maxTurnsPerRun`. */
  mustHandOn(): boolean {
    return wf.workflowInfo().continueAsNewSuggested || this.state.turnsThisRun >= this.maxTurnsPerRun;
  }

  /** What is carried still fits a continue-as-new input. */
  mayHandOn(): boolean {
    return this.state.carriedBytes() < DEFAULTS.maxCarriedBytes;
  }

  /** The run continues as new at the next chance. */
  shouldHandOn(): boolean {
    return this.mustHandOn() && this.mayHandOn();
  }

  /** An activity's input for this session: its ids, then the step's own fields. */
  withIds<T extends object>(fields: T): SessionIds & T {
    return { ...this.ids, ...fields };
  }
}
