import { z } from 'zod';
import { runToolCall, type ToolRunEnv } from '../../activities/parts/run-tool-call';
import { toolRunPolicy } from '../../src/tools/tool-run-policy';
import { RetryableToolError } from '../../src/tools/tool-errors';
import type { ToolContext, ToolDefinition } from '../../src/tools/registry';

const ctx = { agentId: 'a', sessionKey: 'agent:a:main', idempotencyKey: 'wf/entry/toolu_1' };

/** An activity that is never cancelled; sleeps are recorded, not waited. */
function quietEnv(): ToolRunEnv & { slept: number[] } {
  const slept: number[] = [];
  return {
    cancellationSignal: new AbortController().signal,
    cancelled: new Promise<never>(() => undefined),
    sleep: async (ms) => void slept.push(ms),
    slept,
  };
}

function tool(run: ToolDefinition['run'], limits: Pick<ToolDefinition, 'timeoutMs' | 'retry'> = {}): ToolDefinition {
  return { name: 'lookup_account', description: 'Looks an account up', input: z.object({}), run, ...limits };
}

const text = (run: Awaited<ReturnType<typeof runToolCall>>) =>
  run.output.content.map((b) => (b.type === 'text' ? b.text : '')).join('');

describe('runToolCall', () => {
  it('answers a thrown error with an error result naming the tool and the message, after one run', async () => {
    let runs = 0;
    const t = tool(async () => {
      runs++;
      throw new Error('no such account');
    });
    const run = await runToolCall(t, {}, ctx, toolRunPolicy(t, { toolTimeoutMs: 1_000 }), quietEnv());
    expect([run.output.isError, text(run), runs]).toEqual([true, 'tool "lookup_account" failed: no such account', 1]);
  });

  it('answers a synchronous throw the same way', async () => {
    const t = tool(() => {
      throw new TypeError('bad state');
    });
    expect(text(await runToolCall(t, {}, ctx, toolRunPolicy(t, { toolTimeoutMs: 1_000 }), quietEnv()))).toBe(
      'tool "lookup_account" failed: bad state',
    );
  });

  it('runs a RetryableToolError again with the same idempotency key, waiting between runs, until it answers', async () => {
    const keys: string[] = [];
    const t = tool(async (_input, c: ToolContext) => {
      keys.push(c.idempotencyKey);
      if (keys.length < 3) throw new RetryableToolError('the ledger is busy');
      return 'balance 12';
    });
    const env = quietEnv();
    const run = await runToolCall(t, {}, ctx, toolRunPolicy(t, { toolTimeoutMs: 1_000 }), env);
    expect([run.output.isError, text(run), run.attempts]).toEqual([undefined, 'balance 12', 3]);
    expect(keys).toEqual([ctx.idempotencyKey, ctx.idempotencyKey, ctx.idempotencyKey]);
    expect(env.slept).toEqual([1_000, 2_000]);
  });

  it('hands the last error on when the attempts run out', async () => {
    let runs = 0;
    const t = tool(
      async () => {
        runs++;
        throw new Error(`flaky ${runs}`);
      },
      { retry: { maxAttempts: 2, initialIntervalMs: 5 } },
    );
    const run = await runToolCall(t, {}, ctx, toolRunPolicy(t, { toolTimeoutMs: 1_000 }), quietEnv());
    expect([text(run), runs]).toEqual(['tool "lookup_account" failed after 2 attempts: flaky 2', 2]);
  });

  it('keeps an error result the tool returned without running it again', async () => {
    let runs = 0;
    const t = tool(
      async () => {
        runs++;
        return { content: [{ type: 'text', text: 'account closed' }], isError: true };
      },
      { retry: { maxAttempts: 3 } },
    );
    const run = await runToolCall(t, {}, ctx, toolRunPolicy(t, { toolTimeoutMs: 1_000 }), quietEnv());
    expect([run.output.isError, text(run), runs]).toEqual([true, 'account closed', 1]);
  });

  it('abandons a run that ignores its signal at the deadline, aborting the signal, and never retries it', async () => {
    let signal: AbortSignal | undefined;
    let runs = 0;
    const t = tool(
      (_input, c) => {
        runs++;
        signal = c.signal;
        return new Promise(() => undefined);
      },
      { timeoutMs: 50, retry: { maxAttempts: 3 } },
    );
    const run = await runToolCall(t, {}, ctx, toolRunPolicy(t, { toolTimeoutMs: 60_000 }), quietEnv());
    expect([run.timedOut, run.output.isError, text(run), runs]).toEqual([
      true,
      true,
      'tool "lookup_account" timed out after 0.05 s and was abandoned; its signal was aborted',
      1,
    ]);
    expect(signal?.aborted).toBe(true);
  });

  it('lets an abandoned run reject later without an unhandled rejection', async () => {
    let reject!: (e: Error) => void;
    const t = tool(() => new Promise((_resolve, r) => (reject = r)), { timeoutMs: 20 });
    const run = await runToolCall(t, {}, ctx, toolRunPolicy(t, { toolTimeoutMs: 60_000 }), quietEnv());
    expect(run.timedOut).toBe(true);
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    reject(new Error('too late'));
    await new Promise((r) => setTimeout(r, 20));
    process.off('unhandledRejection', unhandled);
    expect(unhandled).not.toHaveBeenCalled();
  });

  it('rethrows the cancellation when the activity is cancelled, after aborting the tool', async () => {
    const cancel = new AbortController();
    let rejectCancelled!: (e: Error) => void;
    const cancelled = new Promise<never>((_r, reject) => (rejectCancelled = reject));
    let signal: AbortSignal | undefined;
    const t = tool((_input, c) => {
      signal = c.signal;
      return new Promise(() => undefined);
    });
    const running = runToolCall(t, {}, ctx, toolRunPolicy(t, { toolTimeoutMs: 60_000 }), {
      cancellationSignal: cancel.signal,
      cancelled,
      sleep: async () => undefined,
    });
    await new Promise((r) => setTimeout(r, 10));
    cancel.abort();
    rejectCancelled(new Error('cancelled'));
    await expect(running).rejects.toThrow('cancelled');
    expect(signal?.aborted).toBe(true);
  });
});
