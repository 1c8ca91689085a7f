/**
 * After SIGTERM/SIGINT the worker drains (the SDK stops polling and waits for in-flight tasks). If
 * that never finishes — the Temporal server is gone and a poll or a connection close hangs — the
 * process exits anyway after `afterMs`, so a deploy or a supervisor is never stuck on it.
 */
export function exitIfShutdownHangs(afterMs: number): void {
  const arm = (signal: NodeJS.Signals) => {
    process.stderr.write(`keel worker: ${signal}: draining in-flight work (at most ${Math.round(afterMs / 1000)} s)\n`);
    setTimeout(() => {
      process.stderr.write('keel worker: shutdown did not finish in time; exiting\n');
      process.exit(1);
    }, afterMs).unref();
  };
  process.once('SIGTERM', arm);
  process.once('SIGINT', arm);
}
