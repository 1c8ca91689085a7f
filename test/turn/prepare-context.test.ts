import { testDatabases } from '../support/databases';
import { testDeps } from '../support/keel-deps';
import { prepareContext } from '../../activities/prepare-context';
import { appendEntries, getEntry } from '../../src/store/entries-repo';
import { ensureSession } from '../../src/store/sessions-repo';
import type { AgentMessage, MessageEntry } from '../../src/context/types';
import { estimateTokens } from '../../src/context/estimate-tokens';

describe.each(testDatabases())('prepareContext on $name', (database) => {
  it('tokenizes only entries without a stored estimate, and stores theirs for the next turn', async () => {
    const store = await database.open();
    try {
      const deps = testDeps(store, 'http://127.0.0.1:9');
      const { session_id: sessionId } = await ensureSession(store.db, { agentId: 'a', sessionKey: 'agent:a:main', newSessionId: 's1', now: new Date() });
      const at = new Date().toISOString();
      const messages: AgentMessage[] = Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0 ? { role: 'user', content: `question ${i} about the deploy` } : { role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }] },
      );
      const entries = messages.map((message, i): MessageEntry => ({ type: 'message', id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: at, message }));
      // Every entry but the last was stored with its estimate; the last came from an import without one.
      await appendEntries(store.db, 'a', sessionId, entries.map((entry, i) => ({ entry, tokenEstimate: i === 39 ? null : estimateTokens(entry.message) })));

      const first = await prepareContext(deps, 'a', 'agent:a:main', sessionId);
      expect(first.tokensComputed).toBe(1);
      expect(first.estimatedTokens).toBe(messages.reduce((n, m) => n + estimateTokens(m), 0));
      expect((await getEntry(store.db, 'a', sessionId, 'e39'))!.token_estimate).toBe(estimateTokens(messages[39]!));

      const second = await prepareContext(deps, 'a', 'agent:a:main', sessionId);
      expect(second.tokensComputed).toBe(0);
      expect(second.estimatedTokens).toBe(first.estimatedTokens);
    } finally {
      await store.close();
    }
  });
});
