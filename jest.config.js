/** Tests run TypeScript through swc (type-checking is `tsc --noEmit` in `npm test`). */
module.exports = {
  // Node's, and drops the PostgreSQL schemas a suite made when it ends.
  testEnvironment: '<rootDir>/test/support/schema-dropping-environment.ts',
  verbose: true,
  // Jest's own output, then the ten slowest suites with their seconds (so CI's log shows where time went).
  reporters: ['default', '<rootDir>/test/support/slowest-suites-reporter.js'],
  roots: ['<rootDir>/test'],
  // Says which suites skip PostgreSQL, and compiles the entry points that tests run as processes.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  // Stops the Temporal dev servers jest workers shared across suites.
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testMatch: ['**/*.test.ts'],
  // The examples import the package by its name (tsconfig.json's paths say the same).
  moduleNameMapper: { '^keel-agents$': '<rootDir>/src/index.ts', '^keel-agents/worker$': '<rootDir>/workers/index.ts' },
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // Suites that start a Temporal dev server or PostgreSQL take seconds to set up.
  testTimeout: 120000,
  // Two cores: integration suites each start a server; run them in two workers.
  maxWorkers: 2,
};
