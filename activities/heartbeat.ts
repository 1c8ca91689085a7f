import { Context } from '@temporalio/activity';

/**
 * Heartbeats on every call to `beat()` (throttled by the SDK) and on a timer while a request waits for
 * its first byte, so a dead worker is noticed within the heartbeat timeout, not the start-to-close one.
 */
export function startHeartbeat(intervalMs = 1000): { beat(): void; stop(): void } {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), intervalMs);
  return {
    beat: () => ctx.heartbeat(),
    stop: () => clearInterval(timer),
  };
}
