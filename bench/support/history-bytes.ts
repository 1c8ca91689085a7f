import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** Size of a workflow's current run history, as Temporal stores it (protobuf bytes). */
export interface HistorySize {
  readonly runId: string;
  readonly events: number;
  readonly bytes: number;
}

/**
 * Fetches the latest run's history and measures its protobuf-encoded size (what Temporal's 50 MiB
 * history limit counts). Reads the whole history: call it outside timed sections.
 */
export async function historySize(client: Client, workflowId: string): Promise<HistorySize> {
  const handle = client.workflow.getHandle(workflowId);
  const { runId } = await handle.describe();
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  return {
    runId,
    events: history.events?.length ?? 0,
    bytes: temporal.api.history.v1.History.encode(history).finish().byteLength,
  };
}

/** Bytes and events one turn added, from sizes before and after `turns` turns on the same run. */
export interface HistoryGrowth {
  readonly turns: number;
  readonly bytesPerTurn: number | null;
  readonly eventsPerTurn: number | null;
  /** Set when the batch crossed a continue-as-new, which makes the difference meaningless. */
  readonly note?: string;
}

/** Per-turn growth between two measurements of the same workflow. */
export function historyGrowth(before: HistorySize, after: HistorySize, turns: number): HistoryGrowth {
  if (before.runId !== after.runId) {
    return { turns, bytesPerTurn: null, eventsPerTurn: null, note: 'the workflow continued-as-new during the batch' };
  }
  return {
    turns,
    bytesPerTurn: Math.round((after.bytes - before.bytes) / turns),
    eventsPerTurn: Math.round(((after.events - before.events) / turns) * 10) / 10,
  };
}
