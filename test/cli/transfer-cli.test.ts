import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keel } from '../support/keel-cli';
import { freshSchemaUrl } from '../support/databases';

// Each case starts `keel` (ts-node) processes: under load one needs more than jest's default.
jest.setTimeout(300_000);

const variants: Array<{ name: string; databaseUrl: () => Promise<string | undefined> }> = [{ name: 'PGlite', databaseUrl: async () => undefined }];
if (process.env.TEST_DATABASE_URL) variants.push({ name: 'PostgreSQL', databaseUrl: () => freshSchemaUrl(process.env.TEST_DATABASE_URL!) });

describe.each(variants)('keel import and export on $name', (variant) => {
  let home: string;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'keel-transfer-'));
    env = { KEEL_HOME: home, KEEL_CONFIG: undefined, DATABASE_URL: await variant.databaseUrl(), TEMPORAL_ADDRESS: undefined };
  });

  it('refuses a file it cannot use, naming it and what it reads, and imports nothing', async () => {
    const notes = join(home, 'notes.txt');
    await writeFile(notes, 'remember the milk\n');
    const run = await keel(['import', notes, '--agent', 'main'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(notes);
    expect(run.stderr).toContain('*.jsonl');
    expect(run.stderr).toContain('sessions.json');
    expect(run.stderr).not.toContain('imported 0');
  });

  it('says an HTML page saved as .jsonl is not JSON Lines, and fails', async () => {
    const page = join(home, 'page.jsonl');
    await writeFile(page, '<!DOCTYPE html>\n<html><body>a transcript viewer</body></html>\n');
    const run = await keel(['import', page, '--agent', 'main'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${page}: not JSON Lines: line 1 is not JSON`);
    expect(run.stderr).not.toContain('empty file');
  });
});
