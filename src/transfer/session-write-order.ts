/**
 * The order in which files imported side by side write: a file waits only for the earlier files of
 * its own session, so different sessions write at once and one session's files land in file order.
 * A file's session is known only once its header was read, so files take their place in file order:
 * a file's place is settled after the previous file's.
 */
export class SessionWriteOrder {
  private lastPlaced: Promise<void> = Promise.resolve();
  private readonly lastWrite = new Map<string, Promise<void>>();

  /** The next file's turn (call once per file, in file order). */
  nextFile(): WriteTurn {
    const previousPlaced = this.lastPlaced;
    const placed = deferred();
    const finished = deferred();
    this.lastPlaced = placed.promise;
    let waited = false;
    return {
      wait: async (sessionId) => {
        if (waited) throw new Error('a file waits for its turn once');
        waited = true;
        await previousPlaced;
        const before = this.lastWrite.get(sessionId);
        this.lastWrite.set(sessionId, finished.promise);
        placed.resolve();
        await before;
      },
      done: () => {
        // A file that failed before it knew its session still lets the next files take their place.
        placed.resolve();
        finished.resolve();
      },
    };
  }
}

/** One file's turn to write. */
export interface WriteTurn {
  /** Resolves once every earlier file of this session is written (or gave up). */
  wait(sessionId: string): Promise<void>;
  /** This file is written or gave up: the next file of its session may write. Always call it. */
  done(): void;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
