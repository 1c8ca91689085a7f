/**
 * The test environment: Node's, plus dropping the PostgreSQL schemas a suite made once it is over
 * (after its own afterAll hooks closed its stores and workers). A CI run makes hundreds of schemas; a
 * day of runs left thousands, and a catalog that large made every suite's migrations and statements
 * slower (the slowest suites took twice as long).
 */
import NodeEnvironment from 'jest-environment-node';
import { dropTestSchemas, SUITE_SCHEMAS_KEY } from './stale-schemas';

export default class SchemaDroppingEnvironment extends NodeEnvironment {
  override async teardown(): Promise<void> {
    const made = (this.global as Record<string, unknown>)[SUITE_SCHEMAS_KEY];
    const names = Array.isArray(made) ? made.filter((n): n is string => typeof n === 'string') : [];
    await super.teardown();
    const url = process.env.TEST_DATABASE_URL;
    if (url && names.length > 0) await dropTestSchemas(url, names);
  }
}
