import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CONSOLE_SCRIPT } from '../../src/console/console-script.generated';

/**
 * The console's browser code is TypeScript (src/console/browser, type-checked against the operations'
 * views by `npm run typecheck`), bundled by esbuild into the string the server serves. The committed
 * bundle must be that code's, and carry no server code.
 */
describe('the console script bundle', () => {
  it('is the bundle of src/console/browser/console-app.ts as it is now', () => {
    const check = spawnSync(process.execPath, [join(__dirname, '../../scripts/bundle-console.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('is one self-contained script for the browser, without modules or server code', () => {
    expect(CONSOLE_SCRIPT.startsWith('"use strict";\n(() => {')).toBe(true);
    expect(CONSOLE_SCRIPT).not.toMatch(/\brequire\(|\bimport\s*[({"']|\bexport\s/);
    // Types only: zod, kysely and the store never reach the page.
    expect(CONSOLE_SCRIPT).not.toMatch(/zod|kysely|strictObject/);
    expect(CONSOLE_SCRIPT).toContain('/v1/console/sessions?');
  });
});
