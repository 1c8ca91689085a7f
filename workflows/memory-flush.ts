/**
 * The memory flush before a compaction, shared by the session's own jobs and a compaction that runs
 * beside the session (which flushes first itself, so the session does not wait for the flush either).
 */
import * as wf from '@temporalio/workflow';
import type { createMemoryActivities, MemoryFlushInput } from '../activities/memory-activities';
import type { SessionTuning } from '../src/protocol';
import { DEFAULTS } from '../src/config/defaults';
import { describeFailure } from './describe-failure';
import { localActivities } from './local-activities';

type MemoryActivities = ReturnType<typeof createMemoryActivities>;

/** Why a flush ran: the activity decides how much of the context it reads. */
export type FlushPurpose = NonNullable<MemoryFlushInput['purpose']>;

/**
 * The memory flush never blocks or fails what follows it: its failure (a 529 storm past its budget,
 * an overflow) is recorded on the session and handed to the compaction row, and the caller goes on.
 */
export class MemoryFlush {
  private readonly flush: MemoryActivities;

  constructor(
    private readonly ids: { readonly agentId: string; readonly sessionKey: string },
    tuning: SessionTuning = {},
  ) {
    // The flush is best effort: a bounded budget, then the compaction goes on without it.
    this.flush = wf.proxyActivities<MemoryActivities>({
      startToCloseTimeout: '10m',
      scheduleToCloseTimeout: tuning.memoryFlushBudgetMs ?? DEFAULTS.memoryFlushBudgetMs,
      heartbeatTimeout: tuning.modelHeartbeatTimeoutMs ?? DEFAULTS.modelHeartbeatTimeoutMs,
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
    });
  }

  /** Runs the flush; returns what it did, in words for the compaction row. */
  async run(sessionId: string, purpose: FlushPurpose): Promise<string> {
    try {
      const r = await this.flush.memoryFlush({ ...this.ids, sessionId, flushId: wf.uuid4(), now: now(), purpose });
      if (!r.ran) return `skipped: ${r.skipped ?? 'unknown'}`;
      return r.tailOnly ? `ran on the recent tail (${r.notes} notes)` : `ran (${r.notes} notes)`;
    } catch (err) {
      if (!(err instanceof wf.TemporalFailure) || wf.isCancellation(err)) throw err;
      const error = describeFailure(err);
      wf.log.warn('memory flush failed; going on without it', { sessionKey: this.ids.sessionKey, error });
      await localActivities.recordFlushFailure({ ...this.ids, error, now: now() });
      return `failed: ${error}`;
    }
  }
}

function now(): string {
  return new Date().toISOString();
}
