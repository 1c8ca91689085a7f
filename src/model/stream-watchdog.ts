/**
 * An idle timeout for streamed model calls: aborts its signal when `arm` has not been called again
 * within the armed time. Re-armed on every byte or event, so a slow but live stream is never cut
 * while a stalled one fails in seconds.
 */
import { ModelTimeoutError } from './errors';

export class StreamWatchdog {
  readonly #controller = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #expired: ModelTimeoutError | undefined;

  /** Aborts when the watchdog fires; combine it with the caller's signal. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The timeout error once the watchdog fired, else undefined (then any abort was the caller's). */
  get expired(): ModelTimeoutError | undefined {
    return this.#expired;
  }

  /**
   * (Re)starts the countdown: after `ms` without another `arm` the signal aborts, `why` naming the
   * wait as the user sees it ("the model sent nothing" → "the model sent nothing for 20 s").
   */
  arm(ms: number, why: string): void {
    if (this.#expired) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#expired = new ModelTimeoutError({
        providerMessage: `${why}${why.endsWith('within') ? '' : ' for'} ${seconds(ms)}`,
      });
      this.#controller.abort(this.#expired);
    }, ms);
  }

  /** Stops the countdown (the call ended either way). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** `20 s`, or `1.5 s`, or `250 ms` below a second. */
function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}
