import { EmbeddedDatabaseMissingError } from '../../src/embedded/embedded-database-missing-error';
import { importEmbeddedPackage, loadPglite } from '../../src/embedded/load-pglite';

describe('importEmbeddedPackage', () => {
  it('names the package to install when the optional package itself is absent', async () => {
    const absent = 'keel-absent-embedded-package';
    const failure = await importEmbeddedPackage(absent, () => import(absent)).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(EmbeddedDatabaseMissingError);
    expect((failure as EmbeddedDatabaseMissingError).packageName).toBe(absent);
    expect((failure as Error).message).toBe(
      `the embedded database needs the package ${absent}, which is not installed (it is an optional ` +
        `dependency of keel-agents): run \`npm install ${absent}\`, or set DATABASE_URL to a PostgreSQL server`,
    );
  });

  it('rethrows a missing module other than the package as it is', async () => {
    const broken = Object.assign(new Error("Cannot find module './postgres.wasm'"), { code: 'MODULE_NOT_FOUND' });
    await expect(importEmbeddedPackage('@electric-sql/pglite', () => Promise.reject(broken))).rejects.toBe(broken);
  });

  it('loads PGlite when it is installed', async () => {
    const { PGlite } = await loadPglite();
    expect(typeof PGlite.create).toBe('function');
  });
});
