import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { appendEntries } from '../../src/store/entries-repo';
import { exportSessionJsonl } from '../../src/transfer/export-jsonl';
import { importTranscriptFile } from '../../src/transfer/import-jsonl';
import { generateSession, joinLines, toLines } from '../fixtures/generate';

describe.each(testDatabases())('exportSessionJsonl on $name', (database) => {
  let store: Store;
  let dir: string;
  beforeEach(async () => {
    store = await database.open();
    dir = await mkdtemp(join(tmpdir(), 'keel-export-'));
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function exportTo(file: string, agentId: string, sessionId: string) {
    const out = createWriteStream(file);
    const report = await exportSessionJsonl({ db: store.db, agentId, sessionId, out });
    out.end();
    await finished(out);
    return report;
  }

  it.each([
    ['a long session with compactions', 1, 700],
    ['a tool-heavy session without compactions', 2, 300],
  ])('round-trips %s: export → import → export is byte-identical and keeps every entry', async (_name, seed, n) => {
    const entries = generateSession({ seed, entries: n, sessionId: `rt-${seed}` });
    const source = join(dir, 'source.jsonl');
    await writeFile(source, joinLines(toLines(entries)));
    await importTranscriptFile({ db: store.db, agentId: 'one', file: source });

    const first = join(dir, 'first.jsonl');
    const report = await exportTo(first, 'one', `rt-${seed}`);
    expect(report).toMatchObject({ entries: entries.length, synthesizedHeader: false });
    const lines = (await readFile(first, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(entries);

    await importTranscriptFile({ db: store.db, agentId: 'two', file: first });
    const second = join(dir, 'second.jsonl');
    await exportTo(second, 'two', `rt-${seed}`);
    expect(await readFile(second)).toEqual(await readFile(first));
  });

  it('writes a header first when the session was stored without one', async () => {
    await appendEntries(store.db, 'a', 's1', [
      {
        entry: {
          type: 'message',
          id: 'm1',
          parentId: null,
          timestamp: '2026-03-01T10:00:00.000Z',
          message: { role: 'user', content: 'hi' },
        },
        tokenEstimate: 1,
      },
    ]);
    const file = join(dir, 'out.jsonl');
    const report = await exportTo(file, 'a', 's1');
    expect(report.synthesizedHeader).toBe(true);
    const [header, entry] = (await readFile(file, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(header).toEqual({ type: 'session', version: 3, id: 's1', timestamp: '2026-03-01T10:00:00.000Z' });
    expect(entry.id).toBe('m1');
  });

  it('exports only the calling agent’s session', async () => {
    await appendEntries(store.db, 'a', 's1', [
      { entry: { type: 'session', id: 's1', timestamp: '2026-03-01T10:00:00.000Z' }, tokenEstimate: null },
    ]);
    const file = join(dir, 'out.jsonl');
    const report = await exportTo(file, 'b', 's1');
    expect(report.entries).toBe(0);
    expect(await readFile(file, 'utf8')).toBe('');
  });
});
