import * as wf from '@temporalio/workflow';
import { FailureTypes, type SessionWorkflowInput } from '../src/protocol';
import { SubagentRunReport } from './subagent-run-report';
import { SessionRun, type Lifecycle } from './session-run';

/**
 * A subagent's session, started by its parent's `sessions_spawn` as a child workflow with its task
 * as the first request. When its queue is empty it announces every answer of the run to the parent
 * at once (the task's, then the steers'); a `run` child then ends and refuses later steers. A cancel
 * (kill) is announced too, with the answers not yet told, and the run ends as cancelled.
 */
export async function subagentWorkflow(input: SessionWorkflowInput): Promise<void> {
  // What the subagent owes its parent, carried across continue-as-new.
  const report = new SubagentRunReport(input.carried?.subagentAnswers);
  const run = new SessionRun(input);
  run.open(subagentLifecycle(run, report));
  try {
    await run.serve();
  } catch (err) {
    if (!wf.isCancellation(err)) throw err;
    // Killed: the parent hears it as the child's outcome (with the answers not yet told), then the
    // run ends cancelled. A run that already announced its end has told everything.
    if (!report.ended) await wf.CancellationScope.nonCancellable(() => run.jobs.announce(report.pending(), 'killed'));
    throw err;
  }
}

/** The subagent's additions to the loop: one announce when its queue is empty, and its end. */
function subagentLifecycle(run: SessionRun, report: SubagentRunReport): Lifecycle {
  return {
    endsOnCancel: true,
    steerVerdict: () => report.steerVerdict(),
    async settled(request, outcome) {
      if (!('turn' in request)) return;
      const answers = report.answered(request.requestId, outcome, run.ctx.state.hasQueuedRequests());
      if (!answers) return;
      // Not cut short by a kill: once sent, it is the run's one announce, and the kill must know that.
      const { ended } = await wf.CancellationScope.nonCancellable(() => run.jobs.announce(answers));
      report.announced(ended);
    },
    ended: () => (report.ended ? SUBAGENT_ENDED : undefined),
    carried() {
      const answers = report.pending();
      return answers.length > 0 ? { subagentAnswers: answers } : {};
    },
  };
}

/** A request that reached a `run` child after its last announce. */
const SUBAGENT_ENDED = {
  status: 'failed',
  type: FailureTypes.InvalidInput,
  message: 'this subagent has ended; its parent can spawn a new one',
} as const;
