import * as wf from '@temporalio/workflow';

/**
 * A session closes after `idleMs` without work. `wf.condition(fn, timeout)` would start a timer at
 * every wait and cancel it when the next request arrives: two history events and a server-side timer
 * per turn. This timer is started once and, when it fires while the session was busy in the meantime,
 * started again for what is left of the quiet period: a busy session pays one timer per quiet period.
 */
export class IdleTimer {
  private lastBusyAt = Date.now();
  private fired = false;
  /** The running timer, if any (its handlers record the firing; a cancellation only disarms it). */
  private timer: Promise<void> | undefined;

  constructor(private readonly idleMs: number) {}

  /** A job just ended: the quiet period counts from now. */
  busy(): void {
    this.lastBusyAt = Date.now();
  }

  /** Waits until `ready()` holds (true) or the quiet period has run out (false, unless ready then). */
  async wait(ready: () => boolean): Promise<boolean> {
    for (;;) {
      const left = this.lastBusyAt + this.idleMs - Date.now();
      if (left <= 0) return ready();
      this.timer ??= this.start(left);
      await wf.condition(() => ready() || this.fired);
      this.fired = false;
      if (ready()) return true;
    }
  }

  private start(ms: number): Promise<void> {
    return wf.sleep(ms).then(
      () => {
        this.timer = undefined;
        this.fired = true;
      },
      () => {
        // Cancelled with the workflow: the wait that needed it is cancelled too.
        this.timer = undefined;
      },
    );
  }
}
