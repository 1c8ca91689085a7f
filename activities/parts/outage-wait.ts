import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { classifyDbError } from '../../src/store/db-errors';
import { heldDetails } from './held-details';

// Activities are async functions of one or more serializable arguments.
type AnyActivity = (...args: never[]) => Promise<unknown>;

/** How an activity waits for the database: how often it asks, and for how long at most per attempt. */
export interface OutageWaitOptions {
  /** Answers true once the database serves queries again (a `select 1` with a short timeout). */
  readonly databaseAnswers: () => Promise<boolean>;
  readonly probeIntervalMs: number;
  readonly maxWaitMs: number;
}

/** What the wait needs of the activity's context (a test passes its own). */
export interface WaitingContext {
  readonly info: Pick<
    Context['info'],
    | 'isLocal'
    | 'heartbeatDetails'
    | 'currentAttemptScheduledTimestampMs'
    | 'startToCloseTimeoutMs'
    | 'scheduledTimestampMs'
    | 'scheduleToCloseTimeoutMs'
  >;
  readonly log: Pick<Context['log'], 'info'>;
  heartbeat(details?: unknown): void;
  /** Rejects when the activity is cancelled. */
  sleep(ms: number): Promise<void>;
}

/**
 * Wraps every activity so a transient database error (connection refused or lost) is waited out
 * inside the attempt: the activity asks the database every `probeIntervalMs` and runs again as soon
 * as it answers, instead of failing into Temporal's growing retry backoff. Activities are
 * idempotent (Temporal retries them anyway), and what an attempt received (a model reply, a tool's
 * output) is held, so running again repeats no call. The wait heartbeats with the details the
 * attempt holds, and ends before the attempt's own timeouts; then the error goes to Temporal.
 */
export function withOutageWait<T extends Record<string, AnyActivity>>(
  activities: T,
  opts: OutageWaitOptions,
  context: () => WaitingContext = () => Context.current(),
): T {
  const wrapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      const started = Date.now();
      for (;;) {
        try {
          return await fn(...args);
        } catch (err) {
          if (err instanceof ApplicationFailure || classifyDbError(err) !== 'transient') throw err;
          const ctx = context();
          const waitUntil = Math.min(started + opts.maxWaitMs, attemptDeadline(ctx.info));
          if (!(await waitForDatabase(ctx, opts, waitUntil))) throw err;
          ctx.log.info('database back; the activity runs again in the same attempt', {
            activity: name,
            waitedMs: Date.now() - started,
          });
        }
      }
    };
  }
  return wrapped as T;
}

/** Asks the database until it answers (true) or `until` passes (false), heartbeating what the attempt holds. */
async function waitForDatabase(ctx: WaitingContext, opts: OutageWaitOptions, until: number): Promise<boolean> {
  for (;;) {
    if (!ctx.info.isLocal) ctx.heartbeat(heldDetails(ctx, ctx.info.heartbeatDetails));
    if (await opts.databaseAnswers()) return true;
    if (Date.now() + opts.probeIntervalMs >= until) return false;
    await ctx.sleep(opts.probeIntervalMs);
  }
}

/** When this attempt must have finished (start-to-close, schedule-to-close), less a second to report the failure. */
function attemptDeadline(info: WaitingContext['info']): number {
  const ends = [info.currentAttemptScheduledTimestampMs + (info.startToCloseTimeoutMs || Infinity)];
  if (info.scheduleToCloseTimeoutMs) ends.push(info.scheduledTimestampMs + info.scheduleToCloseTimeoutMs);
  return Math.min(...ends) - 1_000;
}
