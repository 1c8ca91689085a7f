import { Context } from '@temporalio/activity';
import { heldDetails } from './held-details';
import { startHeartbeat } from './heartbeat';

// Activities are async functions of one or more serializable arguments.
type AnyActivity = (...args: never[]) => Promise<unknown>;

/**
 * The compaction workflow's database steps, which its `store` proxy gives a short heartbeat
 * timeout: a worker killed in one of them (a record write waiting on a lock, say) is noticed within
 * that timeout instead of at the step's start-to-close timeout of minutes.
 */
export const COMPACTION_STORE_STEPS = [
  'recordCompactionStart',
  'planCompaction',
  'planRerun',
  'guardSummary',
  'extractiveSummary',
  'writeCompactionRecord',
  'storeRerunSummary',
  'revertCompaction',
  'finishCompaction',
  'failCompaction',
] as const;

/** What the heartbeat needs of the activity's context (a test passes its own). */
export interface LivenessContext {
  readonly info: Pick<Context['info'], 'isLocal' | 'heartbeatDetails'>;
  heartbeat(details?: unknown): void;
}

/**
 * Wraps the named activities so each heartbeats on a timer for as long as it runs, with the details
 * its attempt holds (so a held reply is never cleared): the heartbeat says only that the worker is
 * alive, which is all a step that runs one query or transaction can say. Local activities (no
 * heartbeats) run as they are.
 */
export function withLivenessHeartbeat<T extends Record<string, AnyActivity>>(
  activities: T,
  names: readonly string[],
  intervalMs: number,
  context: () => LivenessContext = () => Context.current(),
): T {
  const wrapped: Record<string, AnyActivity> = { ...activities };
  for (const name of names) {
    const fn = activities[name];
    if (!fn) continue;
    wrapped[name] = async (...args: never[]) => {
      const ctx = context();
      if (ctx.info.isLocal) return fn(...args);
      const heartbeat = startHeartbeat(intervalMs, () => ctx.heartbeat(heldDetails(ctx, ctx.info.heartbeatDetails)));
      try {
        return await fn(...args);
      } finally {
        heartbeat.stop();
      }
    };
  }
  return wrapped as T;
}
