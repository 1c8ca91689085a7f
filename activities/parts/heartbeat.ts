import { Context } from '@temporalio/activity';
import { heldDetails, type HeartbeatContext } from './held-details';

/**
 * Heartbeats every `intervalMs` until `stop()`, whatever the work does meanwhile: a dead worker is
 * noticed within the heartbeat timeout, and that timeout can be seconds, not the longest silence a
 * stream may have (a slow first token, a long thinking block). A stalled stream is the model
 * client's idle timeout's to fail (`modelStreamIdleTimeoutMs`), not the heartbeat's. Each beat
 * sends what the attempt holds in its details (a received reply, a tool's output), so it never
 * clears them.
 */
export function startHeartbeat(intervalMs = 1000, send: () => void = heartbeatOf(Context.current())): { stop(): void } {
  let timer: NodeJS.Timeout | undefined = setInterval(send, intervalMs);
  return {
    stop: () => {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

/** Runs `work` while heartbeating on a timer (see {@link startHeartbeat}); `ctx` is the activity's. */
export async function whileHeartbeating<T>(
  work: () => Promise<T>,
  ctx: HeartbeatContext & { readonly info: { readonly heartbeatDetails?: unknown } } = Context.current(),
): Promise<T> {
  const heartbeat = startHeartbeat(1000, heartbeatOf(ctx));
  try {
    return await work();
  } finally {
    heartbeat.stop();
  }
}

function heartbeatOf(ctx: HeartbeatContext & { readonly info: { readonly heartbeatDetails?: unknown } }): () => void {
  return () => ctx.heartbeat(heldDetails(ctx, ctx.info.heartbeatDetails));
}
