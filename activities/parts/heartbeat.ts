import { Context } from '@temporalio/activity';

/**
 * Heartbeats on a timer while a request waits for its first byte, then only on progress (`beat()`),
 * at most once per `intervalMs`: a dead worker is noticed within the heartbeat timeout, and so is a
 * stream that stalls after it started — the timer no longer covers for it. The throttle is here, not
 * only in the SDK, because each `heartbeat()` the SDK takes costs a protobuf encode and a call into
 * its native core on the main thread: a streamed reply's every event would pay it.
 */
export function startHeartbeat(
  intervalMs = 1000,
  send: () => void = heartbeatOf(Context.current()),
): { beat(): void; stop(): void } {
  // The activity's start counts: the heartbeat timeout runs from it.
  let lastBeat = performance.now();
  const heartbeat = () => {
    lastBeat = performance.now();
    send();
  };
  let timer: NodeJS.Timeout | undefined = setInterval(heartbeat, intervalMs);
  const stopTimer = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  return {
    beat: () => {
      stopTimer();
      if (performance.now() - lastBeat >= intervalMs) heartbeat();
    },
    stop: stopTimer,
  };
}

function heartbeatOf(ctx: Context): () => void {
  return () => ctx.heartbeat();
}
