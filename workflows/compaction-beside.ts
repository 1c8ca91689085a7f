/**
 * A compaction that runs beside its session (`input.background`): it flushes memory itself before
 * recording its row, and tells the session when it lands, success or failure, by a signal to the
 * session's workflow id (whichever run is current after a continue-as-new).
 */
import * as wf from '@temporalio/workflow';
import { compactionLandedSignal, type CompactionLanded, type CompactionWorkflowInput } from '../src/protocol';
import { describeFailure } from './describe-failure';
import { MemoryFlush } from './memory-flush';

/** The input with what the memory flush before it did (recorded on the row, as the session's own compactions do). */
export async function flushedFirst(input: CompactionWorkflowInput): Promise<CompactionWorkflowInput> {
  const ids = { agentId: input.agentId, sessionKey: input.sessionKey };
  const memoryFlush = await new MemoryFlush(ids, input.background?.tuning).run(input.sessionId, 'compaction');
  return { ...input, memoryFlush };
}

/** Signals the session that the compaction landed; a session that is gone has nobody to tell. */
export async function landed(input: CompactionWorkflowInput, landing: CompactionLanded): Promise<void> {
  if (!input.background) return;
  try {
    await wf.CancellationScope.nonCancellable(() =>
      wf.getExternalWorkflowHandle(input.background!.sessionWorkflowId).signal(compactionLandedSignal, landing),
    );
  } catch (err) {
    if (!(err instanceof wf.TemporalFailure)) throw err;
    wf.log.warn('the session this compaction ran beside is gone; nothing to tell', {
      sessionKey: input.sessionKey,
      error: describeFailure(err),
    });
  }
}
