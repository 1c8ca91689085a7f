import { ApplicationFailure, isGrpcServiceError } from '@temporalio/client';

/**
 * gRPC codes with which the server says "not now" to an Update: RESOURCE_EXHAUSTED (a workflow takes at
 * most 10 in-flight Updates), ABORTED and UNAVAILABLE ("workflow update was aborted" when the run
 * continues-as-new before accepting it; the next run takes it).
 */
const TRY_AGAIN_CODES = new Set([8, 10, 14]);

/**
 * The server's failure for an Update that reached a run which closed (continue-as-new) before the
 * worker processed it: it never ran, so sending it again runs it once, on the next run.
 */
const UNPROCESSED_UPDATE = 'UnprocessedUpdate';

/**
 * FAILED_PRECONDITION is "try again" only with this wording: the workflow's task failed (timed out on a
 * busy worker) and the server retries it; an Update sent meanwhile is refused, not lost.
 */
const TASK_IN_FAILED_STATE = /workflow task in failed state/i;

/** True when the server refused the call for now, or the Update was never processed, anywhere in the cause chain. */
export function isAdmissionRejected(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && TRY_AGAIN_CODES.has(e.code)) return true;
    if (isGrpcServiceError(e) && e.code === 9 && TASK_IN_FAILED_STATE.test(e.details ?? e.message)) return true;
    if (e instanceof ApplicationFailure && e.type === UNPROCESSED_UPDATE) return true;
  }
  return false;
}

export interface AdmissionRetryOptions {
  /** Give up after this long (default 5 minutes). */
  readonly deadlineMs?: number;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Injected in tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

/**
 * Runs `call` again while the server refuses it for capacity, with exponential backoff and full jitter
 * (so a burst of senders spreads out instead of retrying in lockstep), until the deadline. The call
 * must be idempotent: Keel's sends carry a fixed Update id, so a retry can never run a turn twice.
 */
export async function retryAdmission<T>(call: () => Promise<T>, opts: AdmissionRetryOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.deadlineMs ?? 5 * 60_000);
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = opts.random ?? Math.random;
  let ceiling = opts.initialDelayMs ?? 100;
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!isAdmissionRejected(err) || Date.now() >= deadline) throw err;
      await sleep(Math.round(random() * ceiling));
      ceiling = Math.min(ceiling * 2, opts.maxDelayMs ?? 2_000);
    }
  }
}
