/**
 * Baseline workflows for bench/turn-latency.ts, bundled apart from Keel's `workflows/` and run on
 * their own task queue. Deterministic code only (no Node imports).
 */
import * as wf from '@temporalio/workflow';
import type { createBaselineActivities } from './activities';
import { baselineIoTurnUpdate, baselineStopSignal, baselineTurnUpdate } from './shared';

/** The same activity options shape as a Keel model call: a regular (not local) activity. */
const { noop, turnIo } = wf.proxyActivities<ReturnType<typeof createBaselineActivities>>({
  startToCloseTimeout: '30s',
});

/** A long-lived workflow whose Update handler runs one regular activity: a bare "turn". */
export async function baselineSessionWorkflow(): Promise<void> {
  let stopped = false;
  wf.setHandler(baselineTurnUpdate, (n) => noop(n));
  wf.setHandler(baselineIoTurnUpdate, (n) => turnIo(n));
  wf.setHandler(baselineStopSignal, () => void (stopped = true));
  await wf.condition(() => stopped && wf.allHandlersFinished());
}

/** Starts, runs one activity, returns: the bare "start a workflow and wait for its result". */
export async function baselineStartWorkflow(n: number): Promise<number> {
  return noop(n);
}
