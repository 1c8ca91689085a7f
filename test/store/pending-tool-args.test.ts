/**
 * The raw arguments of tool calls between the model call and the stored result: written with the
 * assistant entry that holds the calls (and only with it), released with the result, gone with the
 * session. Every step may run twice.
 */
import { testDatabases } from '../support/databases';
import type { Store } from '../../src/store/connect';
import { type EntryToAppend } from '../../src/store/entries-repo';
import {
  appendReplyKeepingToolArgs,
  appendToolResultReleasingArgs,
  loadPendingToolArgs,
} from '../../src/store/pending-tool-args-repo';
import { deleteSessionCascade } from '../../src/store/sessions-repo';
import { ensureSession } from '../support/ensure-session';
import { allEntries } from '../support/store-readers';

const KEY = `sk-ant-api03-${'k9'.repeat(20)}`;
const OTHER_KEY = `sk-ant-api03-${'z8'.repeat(20)}`;
const NOW = '2026-11-23T10:00:00.000Z';

const reply = (id: string, apiKey: string): EntryToAppend => ({
  entry: {
    type: 'message',
    id,
    parentId: null,
    timestamp: NOW,
    message: {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'toolu_1', name: 'deploy', arguments: { apiKey } }],
      stopReason: 'toolUse',
    },
  },
  tokenEstimate: 10,
});
const result = (id: string, text: string): EntryToAppend => ({
  entry: {
    type: 'message',
    id,
    parentId: 'a1',
    timestamp: NOW,
    message: {
      role: 'toolResult',
      toolCallId: 'toolu_1',
      toolName: 'deploy',
      content: [{ type: 'text', text }],
      isError: false,
    },
  },
  tokenEstimate: 5,
});

describe.each(testDatabases())('pending tool arguments on $name', (database) => {
  let store: Store;
  beforeEach(async () => {
    store = await database.open();
    await ensureSession(store.db, { agentId: 'a', sessionKey: 'agent:a:main', newSessionId: 's1', now: new Date(NOW) });
  });
  afterEach(async () => store.close());

  it('keeps the raw arguments of the reply the transcript holds, not of a retried call that lost the race', async () => {
    expect((await appendReplyKeepingToolArgs(store.db, 'a', 's1', reply('a1', KEY))).inserted).toBe(1);
    // A second attempt of the same model call (another reply, same entry id) changes nothing.
    expect((await appendReplyKeepingToolArgs(store.db, 'a', 's1', reply('a1', OTHER_KEY))).inserted).toBe(0);
    expect(await loadPendingToolArgs(store.db, 'a', 's1', 'a1', 'toolu_1')).toEqual({ apiKey: KEY });
    const stored = JSON.stringify(await allEntries(store.db, 'a', 's1'));
    expect(stored).toContain('[REDACTED:anthropic_key]');
    expect(stored).not.toContain(KEY);
  });

  it('stores the result redacted and releases the arguments in one step that may run twice', async () => {
    await appendReplyKeepingToolArgs(store.db, 'a', 's1', reply('a1', KEY));
    const call = { assistantEntryId: 'a1', toolCallId: 'toolu_1' };
    expect(
      (await appendToolResultReleasingArgs(store.db, 'a', 's1', call, result('r1', `deployed with ${KEY}`))).inserted,
    ).toBe(1);
    expect(
      (await appendToolResultReleasingArgs(store.db, 'a', 's1', call, result('r1', `deployed with ${KEY}`))).inserted,
    ).toBe(0);
    expect(await loadPendingToolArgs(store.db, 'a', 's1', 'a1', 'toolu_1')).toBeUndefined();
    const rows = await allEntries(store.db, 'a', 's1');
    expect(rows.map((r) => r.id)).toEqual(['a1', 'r1']);
    expect(JSON.stringify(rows[1]!.payload)).toContain('deployed with [REDACTED:anthropic_key]');
  });

  it('deletes pending arguments with their session', async () => {
    await appendReplyKeepingToolArgs(store.db, 'a', 's1', reply('a1', KEY));
    await deleteSessionCascade(store.db, 'a', 'agent:a:main', 's1');
    expect(await store.db.selectFrom('pending_tool_args').selectAll().execute()).toEqual([]);
  });
});
