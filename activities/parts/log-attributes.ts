import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The attributes the worker adds to every line an activity logs (its session, its turn). The
 * worker's activity interceptor runs each activity inside its own record; an activity that learns
 * its session only while it runs (startTurn's begin finds or creates the session id) adds it here,
 * so every later line names it.
 */
const current = new AsyncLocalStorage<Record<string, unknown>>();

/** Runs an activity with `attributes` as the record its log lines carry. */
export function runWithLogAttributes<T>(attributes: Record<string, unknown>, fn: () => T): T {
  return current.run(attributes, fn);
}

/** Adds to the running activity's attributes, for its lines from here on; a no-op outside one. */
export function addLogAttributes(attributes: Record<string, unknown>): void {
  const record = current.getStore();
  if (record) Object.assign(record, attributes);
}
