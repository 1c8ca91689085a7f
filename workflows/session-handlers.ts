import * as wf from '@temporalio/workflow';
import {
  FailureTypes,
  awaitResultUpdate,
  cancelRequestSignal,
  compactionLandedSignal,
  decideApprovalUpdate,
  enqueueSignal,
  statusQuery,
  steerUpdate,
  type RequestOutcome,
  type SessionRequest,
} from '../src/protocol';
import { checkTurnRequest } from '../src/sessions/validate-request';
import { checkApprovalDecision } from './approval-book';
import type { SessionContext } from './session-context';

/** The outcome of a request its sender cancelled. */
export const CANCELLED: RequestOutcome = {
  status: 'failed',
  type: FailureTypes.Cancelled,
  message: 'cancelled by its sender',
};

/** The turn running now, in a scope of its own so that its sender can cancel it alone. */
export interface RunningRequest {
  now: { readonly requestId: string; readonly scope: wf.CancellationScope; cancelled: boolean } | undefined;
}

/**
 * The Signals, Updates and Queries every session lifecycle answers, over its run's context:
 * requests admitted by Signal (`enqueue`), by the Update that awaits them (`awaitResult`), or as a
 * steer; a sender's cancel; a person's approval decision; and status.
 */
export function setSessionHandlers(
  ctx: SessionContext,
  running: RunningRequest,
  steerVerdict: () => 'admit' | 'wait' | 'refuse' | undefined,
): void {
  const { state, approvals, input } = ctx;
  wf.setHandler(enqueueSignal, (request) => state.admit(request));
  wf.setHandler(awaitResultUpdate, async ({ requestId, request }) => {
    // Admitted while draining too, as a signal would be: the queue rides to the next run.
    if (request?.requestId === requestId) state.admit(request);
    await wf.condition(() => state.outcome(requestId) !== undefined);
    const outcome = state.outcome(requestId)!;
    state.collected(requestId);
    return outcome;
  });
  wf.setHandler(statusQuery, () => {
    const pendingApprovals = approvals.pending();
    return {
      ...state.status(input),
      ...(pendingApprovals.length > 0 ? { pendingApprovals } : {}),
      ...ctx.background.status(Date.now()),
    };
  });
  // A compaction beside the session ended: its summary is in the transcript, and the next turn reads it.
  wf.setHandler(compactionLandedSignal, (landing) => {
    if (!ctx.background.landed(landing)) return;
    if ('result' in landing) state.recordCompaction(landing.result);
    else
      wf.log.warn('a background compaction failed; its row records why', {
        sessionKey: input.sessionKey,
        error: landing.error,
      });
  });
  // A person's decision on a waiting tool call; a repeat gets the first outcome back.
  wf.setHandler(
    decideApprovalUpdate,
    (decision) => {
      const outcome = approvals.decide(decision, new Date().toISOString());
      if (outcome) return outcome;
      throw wf.ApplicationFailure.nonRetryable(
        `no tool call of this session waits for approval ${decision.approvalId}`,
        FailureTypes.UnknownApproval,
      );
    },
    { validator: checkApprovalDecision },
  );
  wf.setHandler(cancelRequestSignal, ({ requestId }) => {
    if (state.withdraw(requestId)) state.settle(requestId, CANCELLED);
    else if (running.now?.requestId === requestId && !running.now.cancelled) {
      running.now.cancelled = true;
      running.now.scope.cancel();
    }
  });
  wf.setHandler(
    steerUpdate,
    async (request) => {
      // Mid-announce a steer can be neither in the announce nor refused yet: it waits to be one of them.
      try {
        await wf.condition(() => steerVerdict() !== 'wait');
      } catch (err) {
        if (wf.isCancellation(err)) return { admitted: false, reason: 'it is being killed' };
        throw err;
      }
      if (steerVerdict() === 'refuse') return { admitted: false, reason: 'its result was announced' };
      state.admit(request);
      return { admitted: true };
    },
    { validator: (request) => void checkSteer(request) },
  );
}

/** A steer is a turn request: a compaction is not a message to a subagent. */
function checkSteer(request: SessionRequest): void {
  if (!request || typeof request.requestId !== 'string' || !('turn' in request))
    throw new Error('a steer is a turn request: { requestId, turn: { text } }');
  const problem = checkTurnRequest(request.turn);
  if (problem) throw new Error(problem.message);
}
