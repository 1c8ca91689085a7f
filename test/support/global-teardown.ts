/**
 * Jest globalTeardown: stops the Temporal dev servers the run's jest workers shared across suites
 * (test/support/shared-temporal.ts), so nothing the run started outlives it.
 */
import { stopRecordedServers, TEST_RUN_DIR_ENV } from './shared-temporal';

export default function globalTeardown(): void {
  const dir = process.env[TEST_RUN_DIR_ENV];
  if (dir) stopRecordedServers(dir);
}
