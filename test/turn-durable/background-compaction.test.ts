/**
 * Background compaction on the real path: past the background share a compaction starts beside the
 * session, turns go on while its summarizer is held, and the summary lands at a turn boundary with
 * those turns in its kept tail. At the hard limit the session waits for it, and status says so. The
 * summarizer is held on a gate the test opens, so every claim is about order, never about time.
 */
import { testDatabases } from '../support/databases';
import { fakeReply, fakePromptTokens, type FakeRequest } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  lastUserText,
  seedConversation,
} from '../support/durable-turn-helpers';
import { goodSummarizer } from '../compaction-workflow/support';
import { getSession } from '../../src/store/sessions-repo';
import { allEntries } from '../support/store-readers';
import { waitUntil } from '../support/wait-until';
import type { Store } from '../../src/store/connect';
import type { KeelClient } from '../../src/client/keel-client';
import type { SessionStatus } from '../../src/protocol';
import { backgroundCompactionLine } from '../../src/compaction/background-line';

const suite = integrationSuite();

/** A summarizer that answers only once the test opens its gate. */
function heldSummarizer(): { respond: (r: FakeRequest) => Promise<ReturnType<typeof goodSummarizer>>; open(): void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return { respond: async (request) => (await gate, goodSummarizer(request)), open: () => open() };
}

/** The chat model's requests (not the summarizer's, not the flush's), in order. */
function chatRequests(requests: readonly FakeRequest[]): FakeRequest[] {
  return requests.filter((r) => !isSummarizerRequest(r) && !isFlushRequest(r));
}

async function compactionRows(store: Store, agent: string) {
  return store.db.selectFrom('compactions').selectAll().where('agent_id', '=', agent).orderBy('started_at').execute();
}

function statusWith(client: KeelClient, key: string, holds: (s: SessionStatus) => boolean): Promise<SessionStatus> {
  return waitUntil('a status that holds', async () => {
    const status = await client.getStatus(key);
    return holds(status) ? status : undefined;
  });
}

describe.each(testDatabases())('background compaction on $name', (database) => {
  const db = suite.storePerTest(database);

  it('turns go on while the summarizer is held; the summary lands at a turn boundary with those turns kept verbatim', async () => {
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    await seedConversation(db.store.db, agent, key, 300);
    const seededTokens = await sessionTokens(db.store, agent, key);
    // Background share 0.5 of window − reserve (20k): the first turn lands past it, ~8k under the threshold.
    const window = seededTokens + 30_000;
    const summarizer = heldSummarizer();
    suite.fake.setTokenLimit(window);
    suite.fake.respondWith((request) => {
      if (isSummarizerRequest(request)) return summarizer.respond(request);
      if (isFlushRequest(request)) return fakeReply.text('NO_REPLY');
      return fakeReply.text(`answer to ${lastUserText(request).slice(0, 24)}`);
    });
    await suite.withWorker(
      db.store,
      {
        config: { contextWindowTokens: window, backgroundCompactionShare: 0.5 },
        contextWindowTokens: window,
        // A continue-as-new while the compaction runs: its landing must reach the next run.
        tuning: { maxTurnsPerRun: 2 },
      },
      async ({ client, fake }) => {
        await client.sendMessage(key, 'crossing the background share');
        const running = await statusWith(client, key, (s) => s.backgroundCompaction !== undefined);
        expect(running.backgroundCompaction).toMatchObject({ trigger: 'soft' });
        expect(running.backgroundCompaction!.turnWaitingMs).toBeUndefined();

        // Three turns answered while the summary is held: none waited for it.
        const during = ['during one', 'during two', 'during three'];
        for (const text of during) expect((await client.sendMessage(key, text)).reply).toBe(`answer to ${text}`);
        expect(fake.requests.some(isSummarizerRequest)).toBe(true);
        expect((await compactionRows(db.store, agent)).map((c) => [c.trigger, c.status])).toEqual([
          ['soft', 'running'],
        ]);

        summarizer.open();
        await statusWith(client, key, (s) => s.backgroundCompaction === undefined && s.compactionCount === 1);
        const [row] = await compactionRows(db.store, agent);
        expect(row).toMatchObject({ trigger: 'soft', status: 'succeeded' });

        // The next turn reads the summary and, verbatim, every turn appended since its cut.
        await client.sendMessage(key, 'after the landing');
        const next = JSON.stringify(chatRequests(fake.requests).at(-1)!.body.messages);
        expect(next).toContain('Goal: finish the migration');
        for (const text of during) expect(next).toContain(text);
        expect(next).toContain('crossing the background share');
        expect(next).not.toContain('seeded question 0:');
        // Nothing summarized twice, no entry lost, no request over the window.
        const session = await getSession(db.store.db, agent, key);
        const entries = await allEntries(db.store.db, agent, session!.session_id);
        expect(entries.filter((e) => e.type === 'compaction')).toHaveLength(1);
        const users = entries.filter((e) => e.type === 'message' && e.role === 'user').length;
        expect(users).toBe(150 + 1 + during.length + 1);
        expect(fake.overflowed).toEqual([]);
        expect(Math.max(...chatRequests(fake.requests).map((r) => fakePromptTokens(r.body)))).toBeLessThan(window);
      },
    );
  }, 600_000);

  it('at the hard limit the next turn waits for the compaction beside the session, and status says so', async () => {
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    await seedConversation(db.store.db, agent, key, 300);
    const seededTokens = await sessionTokens(db.store, agent, key);
    const window = seededTokens + 30_000;
    const summarizer = heldSummarizer();
    suite.fake.setTokenLimit(window);
    suite.fake.respondWith((request) => {
      if (isSummarizerRequest(request)) return summarizer.respond(request);
      if (isFlushRequest(request)) return fakeReply.text('NO_REPLY');
      return fakeReply.text(`answer to ${lastUserText(request).slice(0, 24)}`);
    });
    await suite.withWorker(
      db.store,
      { config: { contextWindowTokens: window, backgroundCompactionShare: 0.5 }, contextWindowTokens: window },
      async ({ client, fake }) => {
        await client.sendMessage(key, 'crossing the background share');
        await statusWith(client, key, (s) => s.backgroundCompaction !== undefined);
        // ~9k tokens take the context past window − reserve, still inside the window: either this turn's
        // pre-call check or the threshold after it finds the limit, and the session waits for the
        // summary held beside it; status says so, and the next message waits too.
        const big = `past the hard limit ${'lorem ipsum dolor sit amet '.repeat(1_300)}`;
        const bigTurn = client.sendMessage(key, big);
        const waiting = await statusWith(client, key, (s) => s.backgroundCompaction?.turnWaitingMs !== undefined);
        expect(waiting.backgroundCompaction).toMatchObject({ trigger: 'soft' });
        // What the chat and `keel status` print for it.
        expect(backgroundCompactionLine(waiting.backgroundCompaction!)).toMatch(
          /^compacting: \d+ s \(soft, in the background\) · the context reached its limit/,
        );
        // Either the big turn itself waits (its pre-call check: its request has not gone out), or it was
        // answered and the session waits after it (the threshold), holding its queue.
        const carrying = (text: string) =>
          chatRequests(fake.requests).find((r) => JSON.stringify(r.body).includes(text));
        const answeredFirst = carrying('past the hard limit') !== undefined;

        summarizer.open();
        expect((await bigTurn).reply).toBe(`answer to ${big.slice(0, 24)}`);
        const waitingText = answeredFirst ? 'after the landing' : 'past the hard limit';
        if (answeredFirst) await client.sendMessage(key, waitingText);
        // The landed summary was the compaction the limit called for: no second one.
        expect((await compactionRows(db.store, agent)).map((c) => [c.trigger, c.status])).toEqual([
          ['soft', 'succeeded'],
        ]);
        // The first request after the wait went out with the summary and the big message kept verbatim.
        const sent = JSON.stringify(
          chatRequests(fake.requests)
            .filter((r) => JSON.stringify(r.body).includes(waitingText))
            .at(-1)!.body.messages,
        );
        expect(sent).toContain('Goal: finish the migration');
        expect(sent).toContain('past the hard limit');
        expect(fake.overflowed).toEqual([]);
      },
    );
  }, 600_000);

  it('a manual compaction during a background one runs after it lands, on what it left: no range summarized twice', async () => {
    const agent = freshDurableAgent();
    const key = `agent:${agent}:main`;
    await seedConversation(db.store.db, agent, key, 300);
    const window = (await sessionTokens(db.store, agent, key)) + 30_000;
    const summarizer = heldSummarizer();
    suite.fake.setTokenLimit(window);
    suite.fake.respondWith((request) => {
      if (isSummarizerRequest(request)) return summarizer.respond(request);
      if (isFlushRequest(request)) return fakeReply.text('NO_REPLY');
      return fakeReply.text(`answer to ${lastUserText(request).slice(0, 24)}`);
    });
    await suite.withWorker(
      db.store,
      { config: { contextWindowTokens: window, backgroundCompactionShare: 0.5 }, contextWindowTokens: window },
      async ({ client }) => {
        await client.sendMessage(key, 'crossing the background share');
        await statusWith(client, key, (s) => s.backgroundCompaction !== undefined);
        const manual = client.compact(key, { keepRecentTokens: 0 });
        await statusWith(client, key, (s) => s.backgroundCompaction?.turnWaitingMs !== undefined);
        summarizer.open();
        expect(await manual).toMatchObject({ status: 'succeeded' });
        const rows = await compactionRows(db.store, agent);
        expect(rows.map((c) => [c.trigger, c.status])).toEqual([
          ['soft', 'succeeded'],
          ['manual', 'succeeded'],
        ]);
        // The manual one's range starts where the background one kept from: the two never overlap.
        const session = await getSession(db.store.db, agent, key);
        const entries = await allEntries(db.store.db, agent, session!.session_id);
        const compactions = entries.filter((e) => e.type === 'compaction');
        expect(compactions.map((e) => e.id)).toEqual(rows.map((r) => r.id));
        const seqOf = (id: string) => Number(entries.find((e) => e.id === id)!.seq);
        const [first, second] = rows;
        expect(seqOf(second!.first_kept_entry_id!)).toBeGreaterThan(seqOf(first!.first_kept_entry_id!));
      },
    );
  }, 600_000);
});

async function sessionTokens(store: Store, agent: string, key: string): Promise<number> {
  const session = await getSession(store.db, agent, key);
  const entries = await allEntries(store.db, agent, session!.session_id);
  return entries.reduce((sum, e) => sum + Number(e.token_estimate ?? 0), 0);
}
