/**
 * One compaction of one session, in these steps:
 *   1. record a `compactions` row (running)
 *   2. plan: split the active window by token share, keep the recent tail, note oversized entries
 *   3. summarize: a threshold or manual compaction first asks once on the last turn's cached prompt
 *      (summary-on-prompt-cache.ts); otherwise the chunks as parallel activities (read by entry range, heartbeating), with the
 *      fallback chain full → without oversized → partial
 *   4. merge the labelled partial summaries
 *   5. quality guard: identifiers kept verbatim (one summarizer retry, then "Preserved identifiers"), cap
 *   6. write the compaction entry and the session counters in one transaction, idempotently
 *   7. mark the row succeeded with tokens after (skipped, with nothing written, when the summary and
 *      kept tail would not be smaller than what they replace, whoever asked)
 * When every model attempt fails, no model is configured, or the summarize phase passes its deadline
 * (derived from the plan: one summarizer-call budget per sequential step), the extractive summary is
 * written and the compaction is `degraded`: a compaction makes progress or fails visibly on its row.
 *
 * An operator's edit of an earlier compaction runs here too, so it never races a compaction of the
 * same session: a `revert` writes its restoring entry after step 1; a `rerun` plans the earlier
 * compaction's range instead of the window (step 2) and, unless applied, keeps its summary on its
 * row instead of writing an entry (step 6).
 */
import * as wf from '@temporalio/workflow';
import { DEFAULTS } from '../src/config/defaults';
import { KeelAgentId, KeelSessionKey, KeelStatus, KeelTrigger } from '../src/temporal/search-attributes';
import {
  COMPACTION_TIMED_OUT,
  compactionProgressQuery,
  type CompactionWorkflowInput,
  type CompactionWorkflowResult,
} from '../src/protocol';
import { runCompactionCycle } from '../src/compaction/compaction-cycle';
import { describeFailure } from './describe-failure';
import { compactionRef, CompactionSteps, now, store, type Progress } from './compaction-steps';
import { flushedFirst, landed } from './compaction-beside';

/** Runs one compaction of a session; see the steps above. Workflow id: `compactionWorkflowId(agentId, sessionKey)`. */
export async function compactionWorkflow(given: CompactionWorkflowInput): Promise<CompactionWorkflowResult> {
  const progress: Progress = { step: 'recording' };
  // Beside the session, the flush is this workflow's first step, so the session waits for neither.
  const input = given.background ? await flushedFirst(given) : given;
  wf.setHandler(compactionProgressQuery, () => ({ compactionId: input.compactionId, step: progress.step }));
  setSearchAttributes(input, 'running');
  // Operators (and `compactionsRetry`) read which compaction this run is without a worker.
  wf.upsertMemo({ compactionId: input.compactionId });
  try {
    const result = await wf.CancellationScope.withTimeout(input.timeoutMs ?? DEFAULTS.compactionTimeoutMs, () =>
      compact(input, progress),
    );
    progress.step = 'done';
    setSearchAttributes(input, result.degraded ? 'degraded' : result.status);
    await landed(input, { compactionId: input.compactionId, result });
    return result;
  } catch (err) {
    // A bug in workflow code is not a compaction failure: let it fail the task and be fixed.
    if (!(err instanceof wf.TemporalFailure)) throw err;
    const timedOut = wf.isCancellation(err) && !wf.CancellationScope.current().consideredCancelled;
    const error = timedOut
      ? `compaction timed out after ${input.timeoutMs ?? DEFAULTS.compactionTimeoutMs} ms`
      : describeFailure(err);
    progress.step = 'failed';
    await wf.CancellationScope.nonCancellable(() =>
      store.failCompaction({ ...compactionRef(input), error, now: now() }),
    );
    setSearchAttributes(input, 'failed');
    await landed(input, { compactionId: input.compactionId, error });
    if (timedOut) throw wf.ApplicationFailure.nonRetryable(error, COMPACTION_TIMED_OUT);
    throw err;
  }
}

/** The steps above, in order (each is a method of `CompactionSteps`). */
async function compact(input: CompactionWorkflowInput, progress: Progress): Promise<CompactionWorkflowResult> {
  const steps = new CompactionSteps(input, progress);
  // 1. Record the attempt (a compaction id that was already recorded is answered from the record).
  const recorded = await steps.recordStart();
  if (recorded) return recorded;
  if (input.operation?.kind === 'revert') return steps.revert(input.operation.compactionId);
  // 2. Plan the window, or a rerun's range.
  // 3–5. Summarize the chunks in parallel, merge, guard identifiers, within a deadline derived from the plan.
  // 6–7. Write the entry and counters once, then mark the row (a rerun not applied keeps its summary on it).
  // The same cycle `keel replay` runs in memory.
  return runCompactionCycle(steps);
}

function setSearchAttributes(input: CompactionWorkflowInput, status: string): void {
  wf.upsertSearchAttributes([
    { key: KeelAgentId, value: input.agentId },
    { key: KeelSessionKey, value: input.sessionKey },
    { key: KeelTrigger, value: input.trigger },
    { key: KeelStatus, value: status },
  ]);
}
