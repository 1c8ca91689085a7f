import { testDatabases } from '../support/databases';
import { testDeps } from '../support/keel-deps';
import { prepareContext } from '../../activities/parts/prepare-context';
import { appendEntries, getEntry } from '../../src/store/entries-repo';
import { ensureSession } from '../support/ensure-session';
import type { AgentMessage, MessageEntry } from '../../src/context/types';
import { estimateTokens } from '../../src/context/estimate-tokens';

describe.each(testDatabases())('prepareContext on $name', (database) => {
  it('tokenizes only entries without a stored estimate, and stores theirs for the next turn', async () => {
    const store = await database.open();
    try {
      const deps = testDeps(store, 'http://127.0.0.1:9');
      const { session_id: sessionId } = await ensureSession(store.db, {
        agentId: 'a',
        sessionKey: 'agent:a:main',
        newSessionId: 's1',
        now: new Date(),
      });
      const at = new Date().toISOString();
      const messages: AgentMessage[] = Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? { role: 'user', content: `question ${i} about the deploy` }
          : { role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }] },
      );
      const entries = messages.map((message, i): MessageEntry => ({
        type: 'message',
        id: `e${i}`,
        parentId: i ? `e${i - 1}` : null,
        timestamp: at,
        message,
      }));
      // Every entry but the last was stored with its estimate; the last came from an import without one.
      await appendEntries(
        store.db,
        'a',
        sessionId,
        entries.map((entry, i) => ({ entry, tokenEstimate: i === 39 ? null : estimateTokens(entry.message) })),
      );

      const first = await prepareContext(deps, 'a', 'agent:a:main', sessionId, {
        window: deps.config.contextWindowTokens,
      });
      expect(first.tokensComputed).toBe(1);
      expect(first.estimatedTokens).toBe(messages.reduce((n, m) => n + estimateTokens(m), 0));
      expect((await getEntry(store.db, 'a', sessionId, 'e39'))!.token_estimate).toBe(estimateTokens(messages[39]!));

      const second = await prepareContext(deps, 'a', 'agent:a:main', sessionId, {
        window: deps.config.contextWindowTokens,
      });
      expect(second.tokensComputed).toBe(0);
      expect(second.estimatedTokens).toBe(first.estimatedTokens);
    } finally {
      await store.close();
    }
  });
});

describe.each(testDatabases())('prepareContext history limits on $name', (database) => {
  it('keeps only the configured number of user turns for a DM session, with pairing intact', async () => {
    const store = await database.open();
    try {
      const key = 'agent:a:telegram:dm:42';
      const deps = testDeps(store, 'http://127.0.0.1:9', {
        config: { historyLimits: { channels: { telegram: { dmHistoryLimit: 2 } } } },
      });
      const { session_id: sessionId } = await ensureSession(store.db, {
        agentId: 'a',
        sessionKey: key,
        newSessionId: 's-dm',
        now: new Date(),
      });
      const at = new Date().toISOString();
      const messages: AgentMessage[] = [];
      for (let i = 0; i < 5; i++) {
        messages.push({ role: 'user', content: `turn ${i}` });
        messages.push({
          role: 'assistant',
          content: [{ type: 'toolCall', id: `c${i}`, name: 'exec', arguments: {} }],
          stopReason: 'toolUse',
        });
        messages.push({
          role: 'toolResult',
          toolCallId: `c${i}`,
          toolName: 'exec',
          content: [{ type: 'text', text: `out ${i}` }],
        });
        messages.push({ role: 'assistant', content: [{ type: 'text', text: `done ${i}` }] });
      }
      await appendEntries(
        store.db,
        'a',
        sessionId,
        messages.map((message, i) => ({
          entry: {
            type: 'message',
            id: `m${i}`,
            parentId: i ? `m${i - 1}` : null,
            timestamp: at,
            message,
          } as MessageEntry,
          tokenEstimate: 5,
        })),
      );
      const prepared = await prepareContext(deps, 'a', key, sessionId, { window: deps.config.contextWindowTokens });
      const users = prepared.messages.filter((m) => m.role === 'user').map((m) => m.content);
      expect(users).toEqual(['turn 3', 'turn 4']);
      expect(prepared.pipeline.historyLimit).toMatchObject({ limit: 2, droppedMessageCount: 12 });
      expect(prepared.messages[0]!.role).toBe('user');
    } finally {
      await store.close();
    }
  });
});
