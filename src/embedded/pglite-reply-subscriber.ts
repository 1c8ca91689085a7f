import type { ReplyStreamSubscriber } from '../streaming/reply-subscriber';
import type { EmbeddedPglite } from './embedded-pglite';
import type { SessionLock } from './session-lock';

/**
 * Streams from the embedded PGlite: NOTIFY reaches listeners of the same instance only, so the worker
 * and the client share one process and one store (as `npm run dev` does).
 */
export class PgliteReplyStreamSubscriber implements ReplyStreamSubscriber {
  constructor(
    private readonly pglite: EmbeddedPglite,
    /** The store's session lock: LISTEN must not land inside a socket client's transaction. */
    private readonly lock?: SessionLock,
  ) {}

  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const unlisten = await this.exclusive(() => this.pglite.listen(channel, onPayload));
    return async () => {
      if (!this.pglite.closed) await this.exclusive(() => unlisten());
    };
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock ? this.lock.exclusive(fn) : fn();
  }

  /** The PGlite instance belongs to the store that opened it. */
  async close(): Promise<void> {}
}
