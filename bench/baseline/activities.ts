/**
 * The baseline's only activity: returns its input, so the measured cost is Temporal's round trip
 * (schedule, eager dispatch, complete) and not any work.
 */
export function createBaselineActivities() {
  /** Echoes `n`; no I/O. */
  async function noop(n: number): Promise<number> {
    return n;
  }
  return { noop };
}
