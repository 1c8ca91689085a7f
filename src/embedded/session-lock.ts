/**
 * Who may use a PGlite instance's one database session right now. PGlite is a single session: a
 * transaction begun by one user is seen by every statement that runs until it ends, so in-process
 * queries (the worker's pool) and socket clients (other `keel` processes) take turns here, each for
 * a whole unit of work. Waiters are served in arrival order.
 */
export class SessionLock {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  /** Resolves when the session is this caller's; call the returned function exactly once to hand it on. */
  async acquire(): Promise<() => void> {
    if (this.held) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.held = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next();
      else this.held = false;
    };
  }

  /** Runs `fn` while holding the session. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
