import type { RequestOutcome, SubagentAnswer } from '../src/protocol';

/** What the session does with a steer that arrives now: take it, hold it until the announce is out, or refuse it. */
export type SteerVerdict = 'admit' | 'wait' | 'refuse';

/**
 * What a subagent owes its parent: the answers of its current run. A run is the child's work from
 * its first request until its queue is empty; then all of the run's answers (the task's, then each
 * steer's, in the order they ran) go out in one announce, so a steer that lands mid-run never hides
 * the task's answer. While that announce is on its way a steer waits: after it, a `session` child
 * starts a new run with it, and an ended (`run`) child refuses it. So each run announces exactly once.
 *
 * Pure state, driven by the session workflow and tested without a server.
 */
export class SubagentRunReport {
  private answers: SubagentAnswer[];
  private phase: 'working' | 'announcing' | 'ended' = 'working';

  /** `carried`: the answers a run handed on by continue-as-new before announcing them. */
  constructor(carried: readonly SubagentAnswer[] = []) {
    this.answers = [...carried];
  }

  /**
   * A turn request of the child finished. Returns the run's answers to announce now when nothing else
   * is queued (the run is over), else undefined: the answer waits for the rest of the run.
   */
  answered(key: string, outcome: RequestOutcome, moreQueued: boolean): readonly SubagentAnswer[] | undefined {
    if (this.phase !== 'working')
      throw new Error(
        `a subagent answered request ${key} while ${this.phase}: the session ran a request it should not have`,
      );
    this.answers.push(answerOf(key, outcome));
    if (moreQueued) return undefined;
    this.phase = 'announcing';
    return [...this.answers];
  }

  /** The announce reached the parent; `ended` says the child's run is over (`run` mode) and later steers are refused. */
  announced(ended: boolean): void {
    this.answers = [];
    this.phase = ended ? 'ended' : 'working';
  }

  /** True once the child announced the answer that ended it: nothing is owed any more. */
  get ended(): boolean {
    return this.phase === 'ended';
  }

  steerVerdict(): SteerVerdict {
    if (this.phase === 'working') return 'admit';
    return this.phase === 'announcing' ? 'wait' : 'refuse';
  }

  /** Answers not yet announced: carried across continue-as-new, and told with a kill. */
  pending(): readonly SubagentAnswer[] {
    return [...this.answers];
  }
}

/** The parent's view of one outcome: the reply entry it reads, or the failure it is told. */
function answerOf(key: string, outcome: RequestOutcome): SubagentAnswer {
  if (outcome.status === 'done' && 'turn' in outcome)
    return { key, outcome: 'done', replyEntryId: outcome.turn.assistantEntryId };
  return {
    key,
    outcome: 'failed',
    error: outcome.status === 'failed' ? outcome.message : `no result (${outcome.status})`,
  };
}
