import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { appendEntries, appendEntriesRedacted, getEntry } from '../../src/store/entries-repo';
import {
  createCompactionRow,
  getCompaction,
  markFailed,
  writeCompactionRecord,
} from '../../src/store/compactions-repo';
import { recordMemoryFlush, newestNotes } from '../../src/store/memory-repo';
import { getSession } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import { importSessions } from '../../src/transfer/import-sessions';
import type { MessageEntry } from '../../src/context/types';
import { allEntries } from '../support/store-readers';

const R = '\uFFFD';
const POISON = 'a\u0000b\ud800c\udc00d 😀';
const STORED = `a${R}b${R}c${R}d 😀`;
const NOW = new Date(Date.UTC(2026, 0, 1));
const at = (i: number) => new Date(NOW.getTime() + i * 1000).toISOString();

describe.each(testDatabases())('storable text at the persistence boundary on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
  });
  afterEach(async () => store.close());

  it('stores user text, tool arguments and tool results holding NUL and lone surrogates, replaced by U+FFFD', async () => {
    const user: MessageEntry = {
      type: 'message',
      id: 'u1',
      parentId: null,
      timestamp: at(0),
      message: { role: 'user', content: POISON },
    };
    const assistant: MessageEntry = {
      type: 'message',
      id: 'a1',
      parentId: 'u1',
      timestamp: at(1),
      message: {
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'c1', name: 'grep', arguments: { pattern: POISON, [`k\u0000`]: 1 } }],
      },
    };
    const result: MessageEntry = {
      type: 'message',
      id: 't1',
      parentId: 'a1',
      timestamp: at(2),
      message: {
        role: 'toolResult',
        toolCallId: 'c1',
        toolName: 'grep',
        content: [{ type: 'text', text: POISON }],
        details: { raw: POISON },
      },
    };
    await appendEntriesRedacted(store.db, 'A', 's1', [
      { entry: user, tokenEstimate: 3 },
      { entry: assistant, tokenEstimate: 3 },
    ]);
    await appendEntries(store.db, 'A', 's1', [{ entry: result, tokenEstimate: 3 }]);

    const rows = await allEntries(store.db, 'A', 's1');
    expect(rows.map((r) => r.id)).toEqual(['u1', 'a1', 't1']);
    expect(rows[0]!.payload).toMatchObject({ message: { content: STORED } });
    expect(rows[1]!.payload).toMatchObject({
      message: { content: [{ arguments: { pattern: STORED, [`k${R}`]: 1 } }] },
    });
    expect(rows[2]!.payload).toMatchObject({ message: { content: [{ text: STORED }], details: { raw: STORED } } });
    // A retried append of the same (unsanitized) entry is still recognised by id.
    expect(await appendEntries(store.db, 'A', 's1', [{ entry: result, tokenEstimate: 3 }])).toBe(0);
  });

  it('stores compaction summaries, compaction errors and memory notes made storable', async () => {
    await ensureSession(store.db, {
      agentId: 'A',
      sessionKey: 'agent:A:main',
      newSessionId: 's1',
      now: NOW,
      chatType: `direct\u0000`,
    });
    expect((await getSession(store.db, 'A', 'agent:A:main'))!.chat_type).toBe(`direct${R}`);
    await writeCompactionRecord(store.db, {
      agentId: 'A',
      sessionKey: 'agent:A:main',
      sessionId: 's1',
      entryId: 'c1',
      summary: POISON,
      firstKeptEntryId: null,
      tokensBefore: 100,
      tokensAfter: 10,
      now: NOW,
    });
    expect((await getEntry(store.db, 'A', 's1', 'c1'))!.payload).toMatchObject({ type: 'compaction', summary: STORED });

    await createCompactionRow(store.db, {
      id: 'k1',
      agentId: 'A',
      sessionKey: 'agent:A:main',
      sessionId: 's1',
      trigger: 'manual',
      workflowId: null,
      retryOf: null,
      now: NOW,
      countAttempt: true,
    });
    expect(await markFailed(store.db, 'A', 'k1', POISON, NOW)).toBe(true);
    expect((await getCompaction(store.db, 'A', 'k1'))!.error).toBe(STORED);

    await recordMemoryFlush(store.db, {
      agentId: 'A',
      sessionKey: 'agent:A:main',
      sessionId: 's1',
      flushId: 'f1',
      now: NOW.toISOString(),
      cycle: 0,
      notes: [POISON],
    });
    expect((await newestNotes(store.db, 'A', 100)).map((n) => n.text)).toEqual([STORED]);
  });

  it('imports a session index and a transcript holding NUL and lone surrogates', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keel-storable-'));
    try {
      const key = 'agent:main:main';
      // JSON escapes: what a transcript file on disk would hold.
      await writeFile(
        join(dir, 'sessions.json'),
        JSON.stringify({ [key]: { sessionId: 'imp1', updatedAt: 1, label: POISON, thinkingLevel: POISON } }),
      );
      const lines = [
        { type: 'session', id: 'imp1', version: 3, timestamp: at(0), cwd: '/tmp' },
        { type: 'message', id: 'm1', parentId: null, timestamp: at(1), message: { role: 'user', content: POISON } },
      ];
      await writeFile(join(dir, 'imp1.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      const report = await importSessions({ db: store.db, agentId: 'main', dir });
      expect(report.totals).toMatchObject({ failed: 0 });
      const row = await getSession(store.db, 'main', key);
      expect(row).toMatchObject({ label: STORED, toggles: { thinkingLevel: STORED } });
      expect((await getEntry(store.db, 'main', 'imp1', 'm1'))!.payload).toMatchObject({ message: { content: STORED } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
