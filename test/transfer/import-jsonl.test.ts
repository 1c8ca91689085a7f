import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { countEntries, lastCompaction, loadActiveEntries } from '../../src/store/entries-repo';
import { searchHistory } from '../../src/store/history-search';
import { exportSessionJsonl } from '../../src/transfer/export-jsonl';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { activeMessages } from '../../src/context/active-context';
import { repairToolUseResultPairing } from '../../src/context/repair-tool-use-result-pairing';
import type { TranscriptEntry } from '../../src/context/types';
import { importTranscriptFile } from '../../src/transfer/import-jsonl';
import { corrupt, firstToolCallId, generateSession, joinLines, toLines, type FixtureLine } from '../fixtures/generate';
import { allEntries } from '../support/store-readers';

const AGENT = 'main';

describe.each(testDatabases())('importTranscriptFile on $name', (database) => {
  let store: Store;
  let dir: string;
  beforeEach(async () => {
    store = await database.open();
    dir = await mkdtemp(join(tmpdir(), 'keel-import-'));
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const session = (seed: number, entries = 120) => generateSession({ seed, entries, sessionId: `s-${seed}` });
  const write = async (name: string, lines: readonly FixtureLine[], opts?: Parameters<typeof joinLines>[1]) => {
    const file = join(dir, name);
    await writeFile(file, joinLines(lines, opts));
    return file;
  };

  it('imports every entry of a clean session, header included, and keeps no backup', async () => {
    const entries = session(1);
    const file = await write('clean.jsonl', toLines(entries));
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(report).toMatchObject({
      status: 'imported',
      sessionId: 's-1',
      imported: entries.length,
      alreadyPresent: 0,
      dropped: [],
    });
    expect(report.backup).toBeUndefined();
    const rows = await allEntries(store.db, AGENT, 's-1');
    expect(rows.map((r) => r.id)).toEqual(entries.map((e) => e.id));
    expect(rows[0]!.type).toBe('session');
    expect((await readdir(dir)).sort()).toEqual(['clean.jsonl']);
  });

  it('inserts nothing when the same file is imported again', async () => {
    const entries = session(2);
    const file = await write('again.jsonl', toLines(entries));
    await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    const second = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(second).toMatchObject({ status: 'imported', imported: 0, alreadyPresent: entries.length });
    expect(await countEntries(store.db, AGENT, 's-2')).toBe(entries.length);
  });

  const lines3 = toLines(session(3));
  it.each([
    ['a truncated last line', corrupt.truncatedLastLine(lines3), /invalid JSON/],
    ['binary garbage lines', corrupt.binaryGarbage(lines3, 7, [5, 40, 90]), /invalid JSON/],
    [
      'duplicated lines',
      corrupt.duplicatedLines(lines3, [10, 11, 70]),
      /duplicate id "[0-9a-f]{8}" \(first on line \d+\)/,
    ],
  ])(
    'drops %s, reports each line with its reason, and keeps a backup of the original',
    async (_name, variant, reason) => {
      const file = await write('broken.jsonl', variant.lines);
      const original = await readFile(file);
      const report = await importTranscriptFile({
        db: store.db,
        agentId: AGENT,
        file,
        now: () => new Date(1_700_000_000_000),
      });
      expect(report.status).toBe('repaired');
      expect(report.dropped.map((d) => d.line)).toEqual(variant.dropped);
      for (const d of report.dropped) expect(d.reason).toMatch(reason);
      expect(report.imported).toBe(variant.lines.length - variant.dropped.length);
      expect(report.backup).toBe(`${file}.bak-${process.pid}-1700000000000`);
      expect(await readFile(report.backup!)).toEqual(original);
      // The rewritten file is clean: importing it again reports nothing to repair and adds nothing.
      const again = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
      expect(again).toMatchObject({ status: 'imported', imported: 0, dropped: [] });
    },
  );

  it.each([
    ['CRLF line endings', { eol: '\r\n' }],
    ['a UTF-8 BOM', { bom: true }],
    ['no newline after the last line', { trailingNewline: false }],
  ])('imports a file with %s unchanged (not a repair)', async (_name, joinOpts) => {
    const entries = session(4);
    const file = await write('tolerated.jsonl', toLines(entries), joinOpts);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(report).toMatchObject({ status: 'imported', imported: entries.length, dropped: [] });
    const rows = await allEntries(store.db, AGENT, 's-4');
    expect(rows.map((r) => r.payload)).toEqual(entries);
  });

  it('fails a file without a session header, imports none of it, and says why', async () => {
    const file = await write('headless.jsonl', corrupt.missingHeader(toLines(session(5))).lines);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(report.status).toBe('failed');
    expect(report.reason).toMatch(/missing session header: the first entry \(line 1\) has type "message"/);
    expect(report.imported).toBe(0);
    expect(await countEntries(store.db, AGENT, 's-5')).toBe(0);
    expect(await readdir(dir)).toEqual(['headless.jsonl']);
  });

  it.each([
    ['an empty file', [] as string[], /empty file/],
    ['only garbage', ['{"type":', 'not json'], /not JSON Lines: line 1 is not JSON/],
    ['an HTML page', ['<!DOCTYPE html>', '<html><body>hi</body></html>'], /not JSON Lines: line 1 is not JSON/],
    [
      'a header without id',
      ['{"type":"session","timestamp":"2026-01-01T00:00:00Z"}'],
      /invalid session header on line 1: id/,
    ],
  ])('fails %s with a reason', async (_name, lines, reason) => {
    const file = await write('bad.jsonl', lines);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(report.status).toBe('failed');
    expect(report.reason).toMatch(reason);
  });

  it('gives entries without ids deterministic ids, so importing the same bytes twice adds nothing', async () => {
    const variant = corrupt.missingIds(toLines(session(6)), [3, 4, 50]);
    const file = await write('noids.jsonl', variant.lines);
    const first = await importTranscriptFile({ db: store.db, agentId: AGENT, file, rewriteRepaired: false });
    expect(first.status).toBe('repaired');
    expect(first.repaired.generatedIds).toBe(3);
    const ids = (await allEntries(store.db, AGENT, 's-6')).map((r) => r.id).filter((id) => id.startsWith('imp-'));
    expect(ids).toHaveLength(3);
    const second = await importTranscriptFile({ db: store.db, agentId: AGENT, file, rewriteRepaired: false });
    expect(second.imported).toBe(0);
    expect(await countEntries(store.db, AGENT, 's-6')).toBe(variant.lines.length);
  });

  it('writes the generated ids into the rewritten file, so a re-import of it adds nothing', async () => {
    const variant = corrupt.missingIds(toLines(session(7)), [2]);
    const file = await write('noids.jsonl', variant.lines);
    await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    const again = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(again).toMatchObject({ status: 'imported', imported: 0, alreadyPresent: variant.lines.length });
  });

  it('drops entries of the wrong shape, naming the field', async () => {
    const lines = toLines(session(8, 10));
    lines.splice(
      3,
      0,
      JSON.stringify({ type: 'compaction', id: 'c1', parentId: null, timestamp: '2026-01-05T10:00:00Z', summary: 's' }),
    );
    lines.splice(
      4,
      0,
      JSON.stringify({
        type: 'message',
        id: 'm1',
        parentId: null,
        timestamp: '2026-01-05T10:00:00Z',
        message: { role: 'assistant', content: 'text' },
      }),
    );
    lines.splice(
      5,
      0,
      JSON.stringify({ type: 'model_change', id: 'k1', parentId: null, timestamp: '2026-01-05T10:00:00Z', model: 'x' }),
    );
    const file = await write('shapes.jsonl', lines);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(report.dropped).toEqual([
      { line: 4, reason: expect.stringMatching(/invalid compaction entry: firstKeptEntryId/) },
      { line: 5, reason: expect.stringMatching(/invalid message entry: message\.content/) },
    ]);
    // Unknown entry types are kept (loose), with their unknown fields.
    const kept = (await allEntries(store.db, AGENT, 's-8')).find((r) => r.id === 'k1');
    expect(kept?.payload).toMatchObject({ type: 'model_change', model: 'x' });
  });

  it('imports a 10 MB line under the default cap and drops it with a reason under a lower cap', async () => {
    const entries = session(9, 20);
    const variant = corrupt.hugeLine(toLines(entries), 5, 10 * 1024 * 1024, entries[4]!.timestamp);
    const file = await write('huge.jsonl', variant.lines);
    const imported = await importTranscriptFile({ db: store.db, agentId: AGENT, file, rewriteRepaired: false });
    expect(imported).toMatchObject({ status: 'imported', imported: entries.length + 1 });
    const row = (await allEntries(store.db, AGENT, 's-9')).find((r) => r.id === 'huge0001');
    expect(row!.byte_size).toBeGreaterThan(10 * 1024 * 1024);

    const otherAgent = await importTranscriptFile({
      db: store.db,
      agentId: 'capped',
      file,
      rewriteRepaired: false,
      maxLineBytes: 1024 * 1024,
    });
    expect(otherAgent.status).toBe('repaired');
    expect(otherAgent.dropped).toEqual([
      { line: 6, reason: expect.stringMatching(/^line is 1048\d{4} bytes, over the 1048576-byte import limit$/) },
    ]);
  });

  it('reports what the load path pairing repair will do for orphaned and missing tool results', async () => {
    const entries = generateSession({ seed: 10, entries: 60, sessionId: 's-10', compactionEvery: 0 });
    let lines = toLines(entries);
    lines = corrupt.missingToolResult(lines, firstToolCallId(entries)).lines;
    lines = corrupt.orphanedToolResult(lines, lines.length, entries[entries.length - 1]!.timestamp).lines;
    const file = await write('pairing.jsonl', lines);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(report.status).toBe('imported');
    expect(report.repaired.toolPairing).toMatchObject({ added: 1, droppedOrphans: 1 });
    // Counted from the file as it streamed by: the same as the repair over the session read back.
    const { compaction, rows } = await loadActiveEntries(store.db, AGENT, 's-10');
    const readBack = repairToolUseResultPairing(
      activeMessages(
        compaction,
        rows.map((r) => ({ id: r.id, entry: r.payload as unknown as TranscriptEntry })),
      ),
    );
    expect(report.repaired.toolPairing).toEqual({
      added: readBack.added.length,
      droppedDuplicates: readBack.droppedDuplicateCount,
      droppedOrphans: readBack.droppedOrphanCount,
      moved: readBack.moved,
    });
    // Raw entries are stored as they were: the orphan is still there.
    expect((await allEntries(store.db, AGENT, 's-10')).some((r) => r.id === 'orphan01')).toBe(true);
  });

  it('reports the pairing repair of a compacted session from the file as it streamed by, as a read-back of the stored window would', async () => {
    const entries = generateSession({ seed: 12, entries: 120, sessionId: 's-12', compactionEvery: 40 });
    expect(entries.some((e) => e.type === 'compaction')).toBe(true);
    let lines = toLines(entries);
    lines = corrupt.orphanedToolResult(lines, lines.length, entries[entries.length - 1]!.timestamp).lines;
    const file = await write('compacted-pairing.jsonl', lines);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    const { compaction, rows } = await loadActiveEntries(store.db, AGENT, 's-12');
    expect(compaction).toBeDefined();
    const readBack = repairToolUseResultPairing(
      activeMessages(
        compaction,
        rows.map((r) => ({ id: r.id, entry: r.payload as unknown as TranscriptEntry })),
      ),
    );
    expect(readBack.droppedOrphanCount).toBeGreaterThanOrEqual(1);
    expect(report.repaired.toolPairing).toEqual({
      added: readBack.added.length,
      droppedDuplicates: readBack.droppedDuplicateCount,
      droppedOrphans: readBack.droppedOrphanCount,
      moved: readBack.moved,
    });
  });

  it('redacts secrets before they are persisted and reports them', async () => {
    const entries = session(11, 10);
    const secret = 'sk-ant-api03-' + 'A1b2C3d4E5f6G7h8'.repeat(4);
    const lines = toLines(entries);
    lines.push(
      JSON.stringify({
        type: 'message',
        id: 'leak0001',
        parentId: null,
        timestamp: '2026-01-06T00:00:00Z',
        message: { role: 'user', content: `my key is ${secret}` },
      }),
    );
    const file = await write('secret.jsonl', lines);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(report.redactions).toEqual([{ kind: 'anthropic_key', count: 1 }]);
    const row = (await allEntries(store.db, AGENT, 's-11')).find((r) => r.id === 'leak0001')!;
    expect(JSON.stringify(row.payload)).not.toContain(secret);
    expect(JSON.stringify(row.payload)).toContain('[REDACTED:anthropic_key]');
  });

  it('redacts a secret a line spells with JSON escapes, though lines are stored as their own text when nothing secret-shaped shows', async () => {
    const secret = 'sk-ant-api03-' + 'A1b2C3d4E5f6G7h8'.repeat(4);
    const escaped = [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const lines = toLines(session(12, 10));
    const file = join(dir, 'escaped.jsonl');
    await writeFile(
      file,
      `${joinLines(lines)}{"type":"message","id":"leak0002","parentId":null,"timestamp":"2026-01-06T00:00:00Z","message":{"role":"user","content":"key: ${escaped}"}}\n`,
    );
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
    expect(report.redactions).toEqual([{ kind: 'anthropic_key', count: 1 }]);
    const rows = await allEntries(store.db, AGENT, 's-12');
    expect(JSON.stringify(rows.find((r) => r.id === 'leak0002')!.payload)).toContain('key: [REDACTED:anthropic_key]');
    // The lines written as their text hold what parsing them gives.
    expect(rows.map((r) => r.payload).slice(0, -1)).toEqual(lines.map((l) => JSON.parse(String(l))));
  });

  it('replaces NUL characters, which jsonb cannot store, instead of failing the file', async () => {
    const lines = toLines(session(12, 10));
    lines.push(
      JSON.stringify({
        type: 'message',
        id: 'nul00001',
        parentId: null,
        timestamp: '2026-01-06T00:00:00Z',
        message: { role: 'user', content: 'a\u0000b' },
      }),
    );
    const file = await write('nul.jsonl', lines);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file, rewriteRepaired: false });
    expect(report).toMatchObject({ status: 'repaired', repaired: { sanitizedEntries: 1 } });
    const row = (await allEntries(store.db, AGENT, 's-12')).find((r) => r.id === 'nul00001')!;
    expect((row.payload as { message: { content: string } }).message.content).toBe('a\uFFFDb');
  });

  it('fills a missing timestamp from the previous entry', async () => {
    const lines = toLines(session(13, 10));
    const previous = JSON.parse(String(lines[lines.length - 1])).timestamp as string;
    lines.push(JSON.stringify({ type: 'custom', id: 'nots0001', parentId: null, customType: 'x' }));
    const file = await write('nots.jsonl', lines);
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file, rewriteRepaired: false });
    expect(report.repaired.timestampsFilled).toBe(1);
    const row = (await allEntries(store.db, AGENT, 's-13')).find((r) => r.id === 'nots0001')!;
    expect((row.payload as { timestamp: string }).timestamp).toBe(previous);
  });

  it('fails a missing file with a reason instead of throwing', async () => {
    const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file: join(dir, 'nope.jsonl') });
    expect(report).toMatchObject({ status: 'failed', reason: expect.stringMatching(/cannot read file/) });
  });

  describe('a transcript with branches', () => {
    /** A long session (tool calls, compactions), then a branch written on from entry `from`: the new leaf. */
    const branched = (seed: number, from: number) => {
      const entries = session(seed, 700);
      const at = entries[from]!;
      const stamp = (entries.at(-1) as { timestamp: string }).timestamp;
      const branch = [
        {
          type: 'message',
          id: `br-${seed}-u`,
          parentId: at.id,
          timestamp: stamp,
          message: {
            role: 'user',
            content: 'Actually, take the night train to Lisbon instead (train-omega).',
            timestamp: 1,
          },
        },
        {
          type: 'message',
          id: `br-${seed}-a`,
          parentId: `br-${seed}-u`,
          timestamp: stamp,
          message: {
            role: 'assistant',
            content: [{ type: 'text', text: 'Booked the night train to Lisbon.' }],
            timestamp: 2,
          },
        },
      ] as unknown as TranscriptEntry[];
      return {
        entries: [...entries, ...branch],
        left: entries.slice(from + 1),
        kept: [...entries.slice(0, from + 1), ...branch],
      };
    };
    const exportOf = async (agentId: string, sessionId: string, file: string) => {
      const out = createWriteStream(file);
      await exportSessionJsonl({ db: store.db, agentId, sessionId, out });
      out.end();
      await finished(out);
      return readFile(file, 'utf8');
    };

    it('sends only the path from the leaf to the root, keeps the rest searchable, and round-trips the tree', async () => {
      const { entries, left, kept } = branched(31, 300);
      const file = await write('branched.jsonl', toLines(entries));
      const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
      // Written in several batches inside one transaction: the marking is part of it.
      expect(report).toMatchObject({ status: 'imported', imported: entries.length });
      expect(report.branches).toEqual({ leafId: 'br-31-a', offBranch: left.length });

      // The window holds the kept path only; a compaction on the branch left behind is not the session's.
      const active = await loadActiveEntries(store.db, AGENT, 's-31');
      const keptIds = new Set(kept.map((e) => e.id));
      expect(active.rows.length).toBeGreaterThan(2);
      for (const row of active.rows) expect(keptIds.has(row.id)).toBe(true);
      expect(active.rows.at(-1)!.id).toBe('br-31-a');
      const leftCompactions = left.filter((e) => e.type === 'compaction').map((e) => e.id);
      expect(leftCompactions.length).toBeGreaterThan(0);
      const newest = await lastCompaction(store.db, AGENT, 's-31');
      expect(newest === undefined || keptIds.has(newest.id)).toBe(true);
      const sent = JSON.stringify(
        activeMessages(
          active.compaction,
          active.rows.map((r) => ({ id: r.id, entry: r.payload })),
        ),
      );
      expect(sent).toContain('train-omega');
      const leftText = left.find(
        (e) => e.type === 'message' && e.message.role === 'user' && typeof e.message.content === 'string',
      );
      expect(leftText).toBeDefined();
      const leftWords = String((leftText as { message: { content: string } }).message.content);
      expect(sent).not.toContain(leftWords);

      // Still found by search, as everything stored is.
      const hits = await searchHistory(store.db, { agentId: AGENT, sessionIds: ['s-31'], query: leftWords, limit: 10 });
      expect(hits.map((h) => h.row.id)).toContain(leftText!.id);

      // A re-import writes nothing and marks the same entries.
      const again = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
      expect(again).toMatchObject({ imported: 0, alreadyPresent: entries.length, branches: report.branches });

      // The tree round-trips: every entry with its parent, and imported elsewhere it branches the same.
      const first = await exportOf(AGENT, 's-31', join(dir, 'first.jsonl'));
      const elsewhere = await importTranscriptFile({
        db: store.db,
        agentId: 'elsewhere',
        file: join(dir, 'first.jsonl'),
      });
      expect(elsewhere.branches).toEqual(report.branches);
      expect(await exportOf('elsewhere', 's-31', join(dir, 'second.jsonl'))).toBe(first);
      const exported = first
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => JSON.parse(l) as { id: string; parentId: string | null });
      expect(exported.map((e) => [e.id, e.parentId])).toEqual(
        entries.slice(1).map((e) => [e.id, (e as { parentId: string | null }).parentId]),
      );
    });

    it('marks a small file written as one statement too', async () => {
      const { entries, left } = branched(32, 20);
      const small = entries.filter((e, i) => i <= 40 || e.id.startsWith('br-'));
      const file = await write('small.jsonl', toLines(small));
      const report = await importTranscriptFile({ db: store.db, agentId: AGENT, file });
      const leftIds = new Set(left.map((e) => e.id));
      expect(report.branches).toEqual({ leafId: 'br-32-a', offBranch: small.filter((e) => leftIds.has(e.id)).length });
      const active = await loadActiveEntries(store.db, AGENT, 's-32');
      for (const row of active.rows) expect(leftIds.has(row.id)).toBe(false);
    });
  });
});
