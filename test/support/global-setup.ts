/**
 * Jest globalSetup: says which suites skip PostgreSQL, and compiles the process entry points once
 * so every `keel` and worker process a test starts runs JavaScript (test/support/compiled-entries.ts).
 * Test workers inherit the environment set here.
 */
import { COMPILED_DIR_ENV, compileEntries } from './compiled-entries';
import reportSkips from './report-skips';

export default function globalSetup(): void {
  reportSkips();
  process.env[COMPILED_DIR_ENV] = compileEntries();
}
