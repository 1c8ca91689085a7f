/** What the worker watches: the store's health probe. */
export interface HealthWatchOptions {
  readonly probe: () => Promise<boolean>;
  readonly intervalMs: number;
  readonly log: (line: string) => void;
}

/**
 * Probes the database every `intervalMs` and logs each transition once: "database unavailable"
 * when a probe fails after success, "database back" when one succeeds again. The timer is unref'd
 * (it never keeps the process alive); probes never overlap.
 * @returns a function that stops watching.
 */
export function watchDatabaseHealth(opts: HealthWatchOptions): () => void {
  let up = true; // the store was just opened and migrated
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(tick, opts.intervalMs);
    timer.unref();
  };
  const tick = async () => {
    const ok = await opts.probe().catch(() => false);
    if (!stopped && ok !== up) opts.log(ok ? 'database back' : 'database unavailable');
    up = ok;
    schedule();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
