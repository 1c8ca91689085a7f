import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { countEntries } from '../../src/store/entries-repo';
import { getSession } from '../../src/store/sessions-repo';
import { importSessions, type ImportProgress } from '../../src/transfer/import-sessions';
import { corrupt, joinLines, toLines, generateSession, writeCorpus } from '../fixtures/generate';

describe.each(testDatabases())('importSessions on $name', (database) => {
  let store: Store;
  let dir: string;
  beforeEach(async () => {
    store = await database.open();
    dir = await mkdtemp(join(tmpdir(), 'keel-sessions-'));
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('imports a sessions.json index as session rows and its transcripts under the index’s session ids', async () => {
    const corpus = await writeCorpus(dir, { sessions: 3, entriesPerSession: 40, seed: 5, agentId: 'ops' });
    const report = await importSessions({ db: store.db, agentId: 'ops', dir });
    expect(report.totals).toMatchObject({ files: 3, imported: 3, repaired: 0, failed: 0 });
    expect(report.indexes[0]!.entries.map((e) => e.status)).toEqual(['created', 'created', 'created']);
    const index = JSON.parse(await readFile(corpus.indexFile, 'utf8'));
    const row = await getSession(store.db, 'ops', corpus.sessionKeys[0]!);
    const source = index[corpus.sessionKeys[0]!];
    expect(row).toMatchObject({
      session_id: source.sessionId,
      chat_type: 'direct',
      channel: 'telegram',
      display_name: 'User 0',
      model_override: 'claude-opus-4-1',
      // Computed from the transcript at import (the index's contextTokens is OpenClaw's window).
      context_tokens: report.indexes[0]!.entries[0]!.contextTokens,
      total_tokens: 10_000,
      total_tokens_fresh: true,
      compaction_count: source.compactionCount,
      toggles: { thinkingLevel: 'low' },
    });
    expect(row!.context_tokens).toBeGreaterThan(1_000);
    expect(new Date(row!.updated_at).getTime()).toBe(source.updatedAt);
    expect(await countEntries(store.db, 'ops', source.sessionId)).toBe(41);
  });

  it('says which sessions the reset policy has expired, and with keepContext marks them fresh as of the import', async () => {
    const now = new Date(Date.UTC(2026, 11, 7, 12));
    const fourDaysAgo = now.getTime() - 4 * 86_400_000;
    const hourAgo = now.getTime() - 3_600_000;
    await writeFile(
      join(dir, 'sessions.json'),
      JSON.stringify({
        'agent:main:old': { sessionId: 'old', updatedAt: fourDaysAgo, sessionStartedAt: fourDaysAgo },
        'agent:main:new': { sessionId: 'new', updatedAt: hourAgo, sessionStartedAt: hourAgo },
      }),
    );
    const policy = { mode: 'daily' as const, dailyResetHour: 4, timeZone: 'UTC' };
    const plain = await importSessions({ db: store.db, agentId: 'main', dir, resetPolicy: policy, now: () => now });
    expect(plain.indexes[0]!.entries).toEqual([
      expect.objectContaining({ sessionKey: 'agent:main:old', freshness: 'resets', resetReason: 'daily' }),
      expect.objectContaining({ sessionKey: 'agent:main:new', freshness: 'fresh' }),
    ]);
    expect(plain.totals).toMatchObject({ sessions: 2, resetting: 1 });
    expect((await getSession(store.db, 'main', 'agent:main:old'))!.session_started_at.getTime()).toBe(fourDaysAgo);

    // Again with keepContext: the existing row is the import's transcript still, so it is marked fresh.
    const kept = await importSessions({
      db: store.db,
      agentId: 'main',
      dir,
      resetPolicy: policy,
      keepContext: true,
      now: () => now,
    });
    expect(kept.indexes[0]!.entries[0]).toMatchObject({ status: 'exists', freshness: 'kept', resetReason: 'daily' });
    expect(kept.totals).toMatchObject({ sessions: 2, resetting: 0 });
    const old = (await getSession(store.db, 'main', 'agent:main:old'))!;
    expect(old.session_started_at.getTime()).toBe(now.getTime());
    expect(old.last_interaction_at!.getTime()).toBe(now.getTime());
  });

  it('is idempotent: a second run creates no rows and inserts no entries', async () => {
    await writeCorpus(dir, { sessions: 2, entriesPerSession: 30, seed: 6 });
    await importSessions({ db: store.db, agentId: 'main', dir });
    const again = await importSessions({ db: store.db, agentId: 'main', dir });
    expect(again.indexes[0]!.entries.map((e) => e.status)).toEqual(['exists', 'exists']);
    expect(again.totals.entries).toBe(0);
    const n = await sql<{ n: number }>`select count(*)::int as n from transcript_entries`.execute(store.db);
    expect(n.rows[0]!.n).toBe(62);
  });

  it('skips index keys of another agent or with an invalid key, saying why', async () => {
    await writeFile(
      join(dir, 'sessions.json'),
      JSON.stringify({
        'agent:main:main': { sessionId: 'x1', updatedAt: 1 },
        'agent:other:main': { sessionId: 'x2', updatedAt: 1 },
        'not a key': { sessionId: 'x3', updatedAt: 1 },
        'agent:main:telegram:dm:42': { updatedAt: 1 },
      }),
    );
    const report = await importSessions({ db: store.db, agentId: 'main', dir });
    expect(report.indexes[0]!.entries).toEqual([
      // No transcript: nothing in its context yet.
      expect.objectContaining({ sessionKey: 'agent:main:main', sessionId: 'x1', status: 'created', contextTokens: 0 }),
      { sessionKey: 'agent:other:main', status: 'skipped', reason: expect.stringMatching(/belongs to agent "other"/) },
      { sessionKey: 'not a key', status: 'skipped', reason: expect.stringMatching(/session key "not a key"/) },
      { sessionKey: 'agent:main:telegram:dm:42', status: 'skipped', reason: expect.stringMatching(/^sessionId:/) },
    ]);
  });

  it('keeps going past corrupt files and reports each one', async () => {
    const good = generateSession({ seed: 1, entries: 20, sessionId: 'good' });
    await writeFile(join(dir, 'good.jsonl'), joinLines(toLines(good)));
    await writeFile(
      join(dir, 'headless.jsonl'),
      joinLines(corrupt.missingHeader(toLines(generateSession({ seed: 2, entries: 20 }))).lines),
    );
    await writeFile(
      join(dir, 'cut.jsonl'),
      joinLines(corrupt.truncatedLastLine(toLines(generateSession({ seed: 3, entries: 20, sessionId: 'cut' }))).lines),
    );
    const report = await importSessions({ db: store.db, agentId: 'main', dir });
    const byName = Object.fromEntries(report.files.map((f) => [f.file.split('/').pop(), f.status]));
    expect(byName).toEqual({ 'good.jsonl': 'imported', 'headless.jsonl': 'failed', 'cut.jsonl': 'repaired' });
    expect(report.totals).toMatchObject({ files: 3, imported: 1, repaired: 1, failed: 1 });
    // The backup left by the repair is not picked up by a second walk.
    const again = await importSessions({ db: store.db, agentId: 'main', dir });
    expect(again.totals.files).toBe(3);
  });

  it('writes nothing of a file the database refuses, whether it is one statement or a transaction of batches, and goes on with the others', async () => {
    // The database refuses one row of each of two files (a trigger stands for any refusal: a full
    // disk, a constraint, a dropped connection).
    await sql`create function refuse_boom() returns trigger language plpgsql as $$
      begin if new.id like 'boom%' then raise exception 'refused row %', new.id; end if; return new; end $$`.execute(
      store.db,
    );
    await sql`create trigger refuse_boom before insert on transcript_entries for each row execute function refuse_boom()`.execute(
      store.db,
    );
    const withBoom = (seed: number, entries: number, sessionId: string, at: number) => {
      const session = generateSession({ seed, entries, sessionId });
      session[at] = { ...session[at]!, id: `boom-${sessionId}` };
      return session;
    };
    // One batch (one statement), then 700 entries (two batches in one transaction; the refused row is in the second).
    await writeFile(join(dir, 'a-small.jsonl'), joinLines(toLines(withBoom(1, 30, 'small', 20))));
    await writeFile(
      join(dir, 'b-good.jsonl'),
      joinLines(toLines(generateSession({ seed: 2, entries: 40, sessionId: 'good' }))),
    );
    await writeFile(join(dir, 'c-large.jsonl'), joinLines(toLines(withBoom(3, 700, 'large', 650))));
    const report = await importSessions({ db: store.db, agentId: 'main', dir, writers: 2 });
    expect(report.files.map((f) => [f.file.split('/').pop(), f.status, f.imported])).toEqual([
      ['a-small.jsonl', 'failed', 0],
      ['b-good.jsonl', 'imported', 41],
      ['c-large.jsonl', 'failed', 0],
    ]);
    expect(report.files[0]!.reason).toContain('database write failed: refused row boom-small');
    expect(report.files[2]!.reason).toContain('refused row boom-large');
    const counts = await sql<{
      session_id: string;
      n: number;
    }>`select session_id, count(*)::int as n from transcript_entries where agent_id = 'main' group by session_id`.execute(
      store.db,
    );
    expect(counts.rows).toEqual([{ session_id: 'good', n: 41 }]);
  });

  it('writes two files of one session in the order they are imported, though the second is read while the first is written', async () => {
    // One session split over two files (as a log rotated mid-session): three batches each.
    const entries = generateSession({ seed: 4, entries: 3_000, sessionId: 'split' });
    const [header, ...rest] = entries;
    await writeFile(join(dir, 'a.jsonl'), joinLines(toLines([header!, ...rest.slice(0, 1_500)])));
    await writeFile(join(dir, 'b.jsonl'), joinLines(toLines([header!, ...rest.slice(1_500)])));
    const report = await importSessions({ db: store.db, agentId: 'main', dir });
    expect(report.files.map((f) => [f.file.split('/').pop(), f.status, f.imported])).toEqual([
      ['a.jsonl', 'imported', 1_501],
      ['b.jsonl', 'imported', 1_500],
    ]);
    const stored = await sql<{
      id: string;
    }>`select id from transcript_entries where agent_id = 'main' and session_id = 'split' order by seq`.execute(
      store.db,
    );
    expect(stored.rows.map((r) => r.id)).toEqual(entries.map((e) => e.id));
  });

  it('writes another session beside a session split over files, each session in file order', async () => {
    const split = generateSession({ seed: 6, entries: 1_200, sessionId: 'split' });
    const other = generateSession({ seed: 7, entries: 700, sessionId: 'other' });
    const [header, ...rest] = split;
    // a and c are one session; b, between them, another that may write while a does. a's lines are
    // long (~8 MB to read before it writes), c's short: c is ready first and must still wait for a.
    const padded = rest.slice(0, 600).map((e) => ({ ...e, padding: 'x'.repeat(14_000) }));
    await writeFile(join(dir, 'a.jsonl'), joinLines(toLines([header!, ...padded])));
    await writeFile(join(dir, 'b.jsonl'), joinLines(toLines(other)));
    await writeFile(join(dir, 'c.jsonl'), joinLines(toLines([header!, ...rest.slice(600)])));
    const report = await importSessions({ db: store.db, agentId: 'main', dir, writers: 2 });
    expect(report.files.map((f) => [f.file.split('/').pop(), f.status, f.imported])).toEqual([
      ['a.jsonl', 'imported', 601],
      ['b.jsonl', 'imported', 701],
      ['c.jsonl', 'imported', 600],
    ]);
    for (const entries of [split, other]) {
      const sessionId = entries[0]!.id;
      const stored = await sql<{
        id: string;
      }>`select id from transcript_entries where agent_id = 'main' and session_id = ${sessionId} order by seq`.execute(
        store.db,
      );
      expect(stored.rows.map((r) => r.id)).toEqual(entries.map((e) => e.id));
    }
  });

  // 1,000 sessions (a minute here) is bench/import.ts's soak, which checks the same totals.
  it('imports 150 sessions of 200 entries and reports progress after every file', async () => {
    const sessions = 150;
    const corpus = await writeCorpus(dir, { sessions, entriesPerSession: 200, seed: 9, words: 6 });
    const progress: ImportProgress[] = [];
    const report = await importSessions({ db: store.db, agentId: 'main', dir, onProgress: (p) => progress.push(p) });
    expect(report.totals).toMatchObject({ files: sessions, imported: sessions, failed: 0, entries: sessions * 201 });
    expect(progress).toHaveLength(sessions);
    expect(progress.map((p) => p.filesDone)).toEqual(Array.from({ length: sessions }, (_, i) => i + 1));
    expect(progress[sessions - 1]).toMatchObject({
      filesTotal: sessions,
      entries: sessions * 201,
      bytesDone: corpus.bytes,
      bytesTotal: corpus.bytes,
    });
    const n = await sql<{ n: number }>`select count(*)::int as n from sessions`.execute(store.db);
    expect(n.rows[0]!.n).toBe(sessions);
  }, 900_000);
});
