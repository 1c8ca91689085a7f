import { Context } from '@temporalio/activity';

/**
 * Heartbeats on a timer while a request waits for its first byte, then only on progress (`beat()`,
 * throttled by the SDK): a dead worker is noticed within the heartbeat timeout, and so is a stream
 * that stalls after it started — the timer no longer covers for it.
 */
export function startHeartbeat(intervalMs = 1000): { beat(): void; stop(): void } {
  const ctx = Context.current();
  let timer: NodeJS.Timeout | undefined = setInterval(() => ctx.heartbeat(), intervalMs);
  const stopTimer = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  return {
    beat: () => {
      stopTimer();
      ctx.heartbeat();
    },
    stop: stopTimer,
  };
}
