/**
 * One client's line per session: a send is not issued to the session before the previous send of
 * this client to it was admitted, so one client's sends are admitted in the order `sendMessage` was
 * called. Temporal orders only what it has received: two calls in flight at once reach the workflow
 * in either order, and an Update refused at the in-flight limit comes back after Signals sent later.
 * The line makes FIFO a property of the client, not of timing. Sends of different clients are not
 * in one line: the session admits them in the order the server received them.
 *
 * Why not a sequence number the workflow orders by: the workflow would hold a later request for an
 * earlier one that may never come (its sender died before sending it), so it would need a timeout to
 * give up, and the held requests would ride across continue-as-new. Here a send that fails lets the
 * next one go. What the line costs: one client's admissions to one session are sequential round
 * trips, and a send behind a send that collects its outcome in its admitting call waits for that
 * outcome; the session runs one turn at a time, so that turn was ahead of it anyway.
 */
export class AdmissionLine {
  private readonly lines = new Map<string, { last: Promise<void>; lastOver: Promise<void>; open: number }>();

  /** Takes a send's place in the session's line, at once: the order of calls is the order of places. */
  join(workflowId: string): PlaceInLine {
    const line = this.lines.get(workflowId) ?? { last: Promise.resolve(), lastOver: Promise.resolve(), open: 0 };
    this.lines.set(workflowId, line);
    const alone = line.open === 0;
    line.open += 1;
    let admit!: () => void;
    const admitted = new Promise<void>((resolve) => (admit = resolve));
    const ahead = line.last;
    // The next send waits for this one, which never counts as admitted before the ones ahead of it.
    line.last = ahead.then(() => admitted);
    let over!: () => void;
    const isOver = new Promise<void>((resolve) => (over = resolve));
    const overAhead = line.lastOver;
    line.lastOver = overAhead.then(() => isOver);
    let left = false;
    return {
      alone,
      ready: ahead,
      earlierOver: overAhead,
      admitted: () => admit(),
      leave: () => {
        if (left) return;
        left = true;
        admit();
        over();
        line.open -= 1;
        if (line.open === 0 && this.lines.get(workflowId) === line) this.lines.delete(workflowId);
      },
    };
  }
}

/** A send's place in its session's line. */
export interface PlaceInLine {
  /**
   * No other send of this client to the session was in line or waiting for its outcome when this one
   * joined: it may collect its outcome in the call that admits it (the later ones wait for that).
   */
  readonly alone: boolean;
  /** Resolves once every earlier send of this client to the session was admitted or gave up. */
  readonly ready: Promise<void>;
  /**
   * Resolves once every earlier send of this client to the session is over. The session runs them in
   * the order it admitted them, so this send's outcome cannot come first: asking for it before would
   * only hold one of the workflow's 10 in-flight Updates while a burst's earlier sends wait for theirs.
   */
  readonly earlierOver: Promise<void>;
  /** This send is admitted: the next one may go. */
  admitted(): void;
  /** This send is over (its outcome is in, or it failed): also lets the next one go if it had not. */
  leave(): void;
}
