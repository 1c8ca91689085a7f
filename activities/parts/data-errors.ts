import { ApplicationFailure } from '@temporalio/common';
import { dataFailure } from '../../src/store/db-errors';

// Activities are async functions of one or more serializable arguments.
type AnyActivity = (...args: never[]) => Promise<unknown>;

/**
 * Wraps every activity so a permanent database error (bad data, integrity, schema) fails it as a
 * non-retryable `KeelDataError` instead of being retried forever. ApplicationFailures thrown by
 * the activity itself and every other error (connection loss, serialization) pass unchanged, so
 * their retry policy still applies.
 */
export function withDataErrors<T extends Record<string, AnyActivity>>(activities: T): T {
  const wrapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err;
        throw dataFailure(err, `activity ${name}`) ?? err;
      }
    };
  }
  return wrapped as T;
}
