import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { testDatabases } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { flushStep, freshDurableAgent, isFlushRequest, isSummarizerRequest } from '../support/durable-turn-helpers';
import { ensureSession } from '../support/ensure-session';
import { appendEntries, loadActiveEntries } from '../../src/store/entries-repo';
import { estimateTokens } from '../../src/context/estimate-tokens';
import { identifierCharBudget } from '../../src/compaction/identifier-budget';
import { PRESERVED_IDENTIFIERS_HEADING, preservedIdentifiersOf } from '../../src/compaction/quality-guard';
import type { Database } from '../../src/store/schema';
import type { AgentMessage, MessageEntry } from '../../src/context/types';

const suite = integrationSuite();

const WINDOW = 100_000;
/** 1,500 user messages, each naming its own order file: ~57,000 characters of identifiers, over the window's 12,500. */
const MESSAGES = 3_000;
const orderPath = (i: number) => `/srv/orders/2026/order-${String(i).padStart(5, '0')}.json`;
const LOST = 'The user asked about the status of many orders; every one had shipped.';

/** A long support conversation: the user names an order file, the assistant answers without repeating it. */
async function seedOrders(db: Kysely<Database>, agentId: string, sessionKey: string): Promise<string> {
  const session = await ensureSession(db, { agentId, sessionKey, newSessionId: randomUUID(), now: new Date() });
  let parentId: string | null = null;
  for (let from = 0; from < MESSAGES; from += 500) {
    const rows = [];
    for (let i = from; i < from + 500; i++) {
      const at = Date.UTC(2026, 0, 1, 0, 0, i);
      const message: AgentMessage =
        i % 2 === 0
          ? { role: 'user', content: `Please look at ${orderPath(i)} and tell me its status.`, timestamp: at }
          : {
              role: 'assistant',
              content: [{ type: 'text', text: 'Checked it: that order has shipped.' }],
              stopReason: 'stop',
              timestamp: at,
            };
      const entry: MessageEntry = {
        type: 'message',
        id: `o${i}`,
        parentId,
        timestamp: new Date(at).toISOString(),
        message,
      };
      parentId = entry.id;
      rows.push({ entry, tokenEstimate: estimateTokens(message) });
    }
    await appendEntries(db, agentId, session.session_id, rows);
  }
  return session.session_id;
}

const wire = (r: FakeRequest) => JSON.stringify(r.body.messages ?? []);

describe.each(testDatabases())('a session that mentions thousands of identifiers, on $name', (database) => {
  const db = suite.storePerTest(database);

  it("compacts to a summary that keeps the newest identifiers within the window's budget, says how many it left out, and the next turn fits", async () => {
    // The worst summarizer: it keeps none of the identifiers, in its summary and in its revision.
    suite.fake.respondWith((request) => {
      if (isSummarizerRequest(request)) return fakeReply.text(LOST);
      if (isFlushRequest(request)) return flushStep(request, 'orders checked');
      return fakeReply.text('ok');
    });
    await suite.withWorker(
      db.store,
      { config: { contextWindowTokens: WINDOW }, contextWindowTokens: WINDOW },
      async ({ client, store, fake }) => {
        const agent = freshDurableAgent();
        const key = `agent:${agent}:main`;
        const sessionId = await seedOrders(store.db, agent, key);
        const sent = fake.requests.length;

        const result = await client.compact(key, { keepRecentTokens: 2_000 });
        expect(result.status).toBe('succeeded');
        const firstKept = Number(result.firstKeptEntryId!.slice(1));
        const summarized = Array.from({ length: firstKept }, (_, i) => i)
          .filter((i) => i % 2 === 0)
          .map(orderPath);
        expect(summarized.length).toBeGreaterThan(1_400);

        const summary = (await loadActiveEntries(store.db, agent, sessionId)).compaction!.summary;
        const kept = preservedIdentifiersOf(summary);
        // The newest summarized identifiers, in order, and no older one.
        expect(kept.length).toBeGreaterThan(300);
        expect(kept).toEqual(summarized.slice(summarized.length - kept.length));
        expect(summary).toContain(
          `${summarized.length - kept.length} older identifiers left out to fit the context window`,
        );
        const section = summary.slice(summary.indexOf(PRESERVED_IDENTIFIERS_HEADING));
        expect(section.length).toBeLessThanOrEqual(identifierCharBudget(WINDOW) + 300);
        expect(summary).toContain(LOST);
        expect(result.tokensAfter).toBeLessThan(result.tokensBefore / 2);

        // The revision asked the summarizer for the kept identifiers only, not for all 1,500.
        const revision = fake.requests
          .slice(sent)
          .find((r) => isSummarizerRequest(r) && wire(r).includes('lost identifiers'));
        expect(revision).toBeDefined();
        expect(wire(revision!)).toContain(summarized.at(-1));
        expect(wire(revision!)).not.toContain(summarized[0]);

        // The next turn sends the bounded summary and does not compact again.
        const before = fake.requests.length;
        expect((await client.sendMessage(key, 'And the newest order?')).reply).toBe('ok');
        const turn = fake.requests.slice(before).filter((r) => !isSummarizerRequest(r) && !isFlushRequest(r));
        expect(turn).toHaveLength(1);
        expect(wire(turn[0]!)).toContain('older identifiers left out to fit the context window');
        expect(wire(turn[0]!)).toContain(summarized.at(-1));
        expect(wire(turn[0]!)).not.toContain(summarized[0]);
        const status = await client.getStatus(key);
        expect(status.compactionCount).toBe(1);
        expect(status.contextTokens).toBeLessThan(WINDOW / 2);
      },
    );
  }, 300_000);
});
