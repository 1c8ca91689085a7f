/**
 * One tool call, run to an output the model can read: a thrown error becomes an error result naming
 * the tool and the message, a retryable one runs again first (same idempotency key), and a run past
 * its timeout is abandoned at the deadline: its signal is aborted and its promise left to settle
 * unseen, so a tool that ignores the signal cannot hold the session.
 */
import type { ToolContext, ToolDefinition, ToolOutput } from '../../src/tools/registry';
import { retryDelayMs, runsAgain, type ToolRunPolicy } from '../../src/tools/tool-run-policy';
import { errorOutput } from './tool-call-io';

/** What the run needs from its activity: cancellation and a cancellable sleep. */
export interface ToolRunEnv {
  /** Aborted when the activity is cancelled. */
  readonly cancellationSignal: AbortSignal;
  /** Rejects when the activity is cancelled (never resolves). */
  readonly cancelled: Promise<never>;
  sleep(ms: number): Promise<void>;
}

/** How the call ended, for the activity's log line. */
export interface ToolCallRun {
  readonly output: ToolOutput;
  readonly attempts: number;
  readonly timedOut: boolean;
}

type RunOutcome =
  | { readonly kind: 'ok'; readonly output: ToolOutput }
  | { readonly kind: 'error'; readonly error: unknown }
  | { readonly kind: 'timeout' };

/** Runs the tool under its policy until it answers, fails for good or times out; rethrows only a cancellation. */
export async function runToolCall(
  tool: ToolDefinition,
  input: unknown,
  ctx: Omit<ToolContext, 'signal'>,
  policy: ToolRunPolicy,
  env: ToolRunEnv,
): Promise<ToolCallRun> {
  for (let attempts = 1; ; attempts++) {
    const outcome = await runOnce(tool, input, ctx, policy.timeoutMs, env);
    if (outcome.kind === 'ok') return { output: outcome.output, attempts, timedOut: false };
    if (outcome.kind === 'timeout') {
      return {
        output: errorOutput(
          `tool "${tool.name}" timed out after ${seconds(policy.timeoutMs)} s and was abandoned; its signal was aborted`,
        ),
        attempts,
        timedOut: true,
      };
    }
    if (!runsAgain(policy, outcome.error, attempts)) {
      const after = attempts > 1 ? ` after ${attempts} attempts` : '';
      return {
        output: errorOutput(`tool "${tool.name}" failed${after}: ${messageOf(outcome.error)}`),
        attempts,
        timedOut: false,
      };
    }
    await env.sleep(retryDelayMs(policy, attempts));
  }
}

/** One run against its deadline and the activity's cancellation. */
async function runOnce(
  tool: ToolDefinition,
  input: unknown,
  ctx: Omit<ToolContext, 'signal'>,
  timeoutMs: number,
  env: ToolRunEnv,
): Promise<RunOutcome> {
  const controller = new AbortController();
  const forwardCancel = () => controller.abort(env.cancellationSignal.reason);
  env.cancellationSignal.addEventListener('abort', forwardCancel, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<RunOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
  });
  // Settles to an outcome whatever the tool does (a synchronous throw included): an abandoned run never rejects unhandled.
  const run = Promise.resolve()
    .then(() => tool.run(input, { ...ctx, signal: controller.signal }))
    .then(
      (out): RunOutcome => ({
        kind: 'ok',
        output: typeof out === 'string' ? { content: [{ type: 'text', text: out }] } : out,
      }),
      (error: unknown): RunOutcome => ({ kind: 'error', error }),
    );
  try {
    const outcome = await Promise.race([run, deadline, env.cancelled]);
    if (outcome.kind === 'timeout')
      controller.abort(new Error(`tool "${tool.name}" timed out after ${seconds(timeoutMs)} s`));
    // A tool that failed because the activity was cancelled: the cancellation is the outcome.
    if (env.cancellationSignal.aborted) await env.cancelled;
    return outcome;
  } finally {
    clearTimeout(timer);
    env.cancellationSignal.removeEventListener('abort', forwardCancel);
  }
}

/** Seconds as a person reads them: 300000 → "300", 1500 → "1.5". */
function seconds(ms: number): string {
  return String(Number((ms / 1_000).toFixed(3)));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}
