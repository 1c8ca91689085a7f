import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';

type Interceptor = ReturnType<typeof makeGrpcRetryInterceptor>;

/**
 * The client's usual gRPC retry, made safe to close. Temporal's retry interceptor schedules each
 * retry on a timer that `Connection.close()` does not clear; a retry firing after the close throws
 * "Channel has been shut down" outside any await, failing whichever suite is running. Once
 * `stopRetrying` is called nothing new is retried, and it waits out the retries already scheduled,
 * so the connection can then close with no timer left behind.
 */
export function drainableRetry(): { interceptor: Interceptor; stopRetrying(): Promise<void> } {
  const defaults = defaultGrpcRetryOptions();
  let stopping = false;
  let lastRetryAt = 0;
  const interceptor = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => !stopping && defaults.retryableDecider(attempt, status),
    delayFunction: (attempt, status) => {
      const delay = defaults.delayFunction(attempt, status);
      lastRetryAt = Math.max(lastRetryAt, Date.now() + delay);
      return delay;
    },
  });
  return {
    interceptor,
    async stopRetrying() {
      stopping = true;
      const wait = lastRetryAt - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 100));
    },
  };
}
