/**
 * Compaction knows its children: the subagents still running when a session is compacted are
 * listed in the stored summary (and so in the next model request), whichever summarizer wrote it;
 * a later compaction lists the runs still going, not the stale list of the one before.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  isSummaryOnConversationRequest,
  realisticMessage,
} from '../support/durable-turn-helpers';
import { goodSummarizer, promptOf, seedSession } from './support';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { getSession } from '../../src/store/sessions-repo';
import { EXTRACTIVE_SUMMARY_HEADER } from '../../src/compaction/extractive-summary';
import { SUBAGENTS_IN_FLIGHT_HEADING } from '../../src/compaction/subagents-in-flight';
import type { Database } from '../../src/store/schema';
import { testDeps } from '../support/keel-deps';
import { createCompactionActivities } from '../../activities/compaction-activities';

const suite = integrationSuite();

interface Run {
  id: string;
  agentId: string;
  parent: string;
  status: string;
  task: string;
  createdAt: Date;
}

/** A subagent_runs row as a spawn writes it (the child session key is derived from the id). */
async function insertRun(db: Kysely<Database>, r: Run): Promise<string> {
  const child = `agent:${r.agentId}:subagent:${r.id}`;
  await db
    .insertInto('subagent_runs')
    .values({
      id: r.id,
      agent_id: r.agentId,
      parent_session_key: r.parent,
      child_session_key: child,
      mode: 'run',
      depth: 1,
      status: r.status,
      task: r.task,
      result: null,
      workflow_id: null,
      created_at: r.createdAt,
      ended_at: null,
    })
    .execute();
  return child;
}

const summaryOf = async (db: Kysely<Database>, agentId: string, sessionKey: string) => {
  const session = await getSession(db, agentId, sessionKey);
  return (await loadActiveEntries(db, agentId, session!.session_id)).compaction!.summary;
};

describe.each(testDatabases())('subagents in flight at compaction on $name', (database) => {
  const db = suite.storePerTest(database);

  it('the model summary lists the running children of this session, the next request carries them, and the next compaction lists only those still running', () =>
    suite.withWorker(db.store, {}, async ({ client, fake, store }) => {
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      fake.enqueue(fakeReply.text('started the audit'), fakeReply.text('running the tests'));
      await client.sendMessage(key, realisticMessage('Audit the billing module.'));
      await client.sendMessage(key, realisticMessage('And run the test suite.'));

      const longTask = `Run the full test suite of the billing service and report every failure with its stack trace. ${'Include the flaky ones. '.repeat(20)}`;
      const t0 = Date.UTC(2026, 10, 23, 9, 0);
      const audit = await insertRun(store.db, {
        id: `sub-${randomUUID()}`,
        agentId: agent,
        parent: key,
        status: 'running',
        task: 'Audit src/billing for unhandled errors',
        createdAt: new Date(t0),
      });
      const tests = await insertRun(store.db, {
        id: `sub-${randomUUID()}`,
        agentId: agent,
        parent: key,
        status: 'running',
        task: longTask,
        createdAt: new Date(t0 + 1000),
      });
      // Not in flight, or not this session's: never listed.
      await insertRun(store.db, {
        id: `sub-${randomUUID()}`,
        agentId: agent,
        parent: key,
        status: 'completed',
        task: 'Finished long ago',
        createdAt: new Date(t0 - 1000),
      });
      await insertRun(store.db, {
        id: `sub-${randomUUID()}`,
        agentId: agent,
        parent: `agent:${agent}:other`,
        status: 'running',
        task: 'Another session’s child',
        createdAt: new Date(t0),
      });

      fake.respondWith((request) =>
        isSummarizerRequest(request)
          ? goodSummarizer(request)
          : isFlushRequest(request)
            ? fakeReply.text('NO_REPLY')
            : undefined,
      );
      expect((await client.compact(key, { keepRecentTokens: 0 })).status).toBe('succeeded');
      fake.respondWith(undefined);

      const summary = await summaryOf(store.db, agent, key);
      const section = summary.slice(summary.indexOf(SUBAGENTS_IN_FLIGHT_HEADING));
      const lines = section.split('\n').filter((l) => l.startsWith('- '));
      expect(lines).toEqual([
        `- ${audit.split(':').at(-1)} (running, session ${audit}): Audit src/billing for unhandled errors`,
        expect.stringMatching(
          new RegExp(
            `^- ${tests.split(':').at(-1)} \\(running, session ${tests}\\): Run the full test suite of the billing service`,
          ),
        ),
      ]);
      // The task is cut to ~200 characters (the child has it whole).
      expect(lines[1]!.endsWith('…')).toBe(true);
      expect(lines[1]!.length).toBeLessThan(200 + tests.length + 80);
      expect(section).toContain('do not spawn them again');
      expect(summary).not.toContain('Finished long ago');
      expect(summary).not.toContain('Another session’s child');

      // The next turn's model request carries the list in the summary message.
      fake.enqueue(fakeReply.text('waiting for the audit'));
      const next = fake.requests.length;
      await client.sendMessage(key, realisticMessage('Where are we?'));
      const sent = JSON.stringify(fake.requests[next]!.body.messages);
      expect(sent).toContain(SUBAGENTS_IN_FLIGHT_HEADING);
      expect(sent).toContain('Audit src/billing for unhandled errors');

      // The audit ends; the next compaction lists the tests only, once, and the summarizer never sees the stale list.
      await store.db
        .updateTable('subagent_runs')
        .set({ status: 'completed', ended_at: new Date() })
        .where('child_session_key', '=', audit)
        .execute();
      const before = fake.requests.length;
      fake.respondWith((request) =>
        isSummarizerRequest(request)
          ? goodSummarizer(request)
          : isFlushRequest(request)
            ? fakeReply.text('NO_REPLY')
            : undefined,
      );
      expect((await client.compact(key, { keepRecentTokens: 0 })).status).toBe('succeeded');
      fake.respondWith(undefined);
      const summarizerRequests = fake.requests.slice(before).filter(isSummarizerRequest);
      expect(summarizerRequests.length).toBeGreaterThan(0);
      for (const request of summarizerRequests) {
        const messages = request.body.messages ?? [];
        // On the prompt cache the conversation is the turn's, stale list included: the request says to leave it out.
        if (isSummaryOnConversationRequest(request))
          expect(JSON.stringify(messages[messages.length - 1]!.content)).toContain(
            'Leave out its \\"## Subagents in flight\\" list',
          );
        else expect(promptOf(request)).not.toContain('Subagents in flight');
      }
      const second = await summaryOf(store.db, agent, key);
      expect(second.split(SUBAGENTS_IN_FLIGHT_HEADING)).toHaveLength(2);
      expect(second).toContain(`session ${tests}`);
      expect(second).not.toContain(`session ${audit}`);
    }));

  it('the extractive summary (no model) lists them too, and a session with none gets no section', async () => {
    const s = await seedSession(db.store.db, 6, freshDurableAgent());
    const quiet = await seedSession(db.store.db, 6, freshDurableAgent());
    const child = await insertRun(db.store.db, {
      id: `sub-${randomUUID()}`,
      agentId: s.agentId,
      parent: s.sessionKey,
      status: 'running',
      task: 'Migrate the invoices table',
      createdAt: new Date(),
    });
    const noModel = { config: { anthropicApiKey: undefined, anthropicBaseUrl: undefined } };
    await suite.withWorker(db.store, noModel, async ({ client, store }) => {
      expect(await client.compact(s.sessionKey, { keepRecentTokens: 0 })).toMatchObject({
        status: 'succeeded',
        degraded: true,
      });
      const summary = await summaryOf(store.db, s.agentId, s.sessionKey);
      expect(summary.startsWith(EXTRACTIVE_SUMMARY_HEADER)).toBe(true);
      expect(summary).toContain(`${SUBAGENTS_IN_FLIGHT_HEADING}\n`);
      expect(summary).toContain(`(running, session ${child}): Migrate the invoices table`);

      await client.compact(quiet.sessionKey, { keepRecentTokens: 0 });
      expect(await summaryOf(store.db, quiet.agentId, quiet.sessionKey)).not.toContain(SUBAGENTS_IN_FLIGHT_HEADING);
    });
  });

  it('a write planned on a window another compaction replaced since writes nothing (no two summaries of one range)', async () => {
    const s = await seedSession(db.store.db, 4, freshDurableAgent());
    const activities = createCompactionActivities(testDeps(db.store, suite.fake.url));
    const plannedOn = (compactionId: string, windowOf: string | null) => ({
      agentId: s.agentId,
      sessionKey: s.sessionKey,
      sessionId: s.sessionId,
      compactionId,
      summary: `Goal: ship it (${compactionId}).`,
      firstKeptEntryId: 'm2',
      tokensBefore: 500,
      keptTokens: 100,
      now: new Date().toISOString(),
      windowOf,
    });
    // Both planned on the window with no compaction yet; the first writes, the second finds it replaced.
    const first = await activities.writeCompactionRecord(plannedOn('first', null));
    expect(first).toMatchObject({ entryId: 'first', inserted: true });
    expect(await activities.writeCompactionRecord(plannedOn('second', null))).toEqual({
      entryId: null,
      inserted: false,
      tokensAfter: 500,
      superseded: true,
    });
    // A retry of the first one's write still finds its own entry; one planned on the new window writes.
    expect(await activities.writeCompactionRecord(plannedOn('first', null))).toMatchObject({ entryId: 'first' });
    expect(await activities.writeCompactionRecord(plannedOn('third', 'first'))).toMatchObject({ entryId: 'third' });
    const compactions = await db.store.db
      .selectFrom('transcript_entries')
      .select('id')
      .where('session_id', '=', s.sessionId)
      .where('type', '=', 'compaction')
      .orderBy('seq')
      .execute();
    expect(compactions.map((c) => c.id)).toEqual(['first', 'third']);
  });

  it('a retried record write keeps the list the first attempt stored, and reports that summary’s tokens', async () => {
    const s = await seedSession(db.store.db, 4, freshDurableAgent());
    const activities = createCompactionActivities(testDeps(db.store, suite.fake.url));
    await insertRun(db.store.db, {
      id: `sub-${randomUUID()}`,
      agentId: s.agentId,
      parent: s.sessionKey,
      status: 'running',
      task: 'First child',
      createdAt: new Date(),
    });
    const input = {
      agentId: s.agentId,
      sessionKey: s.sessionKey,
      sessionId: s.sessionId,
      compactionId: randomUUID(),
      summary: 'Goal: ship it.',
      firstKeptEntryId: 'm2',
      tokensBefore: 500,
      keptTokens: 100,
      now: new Date().toISOString(),
    };
    const first = await activities.writeCompactionRecord(input);
    // A child spawned between the attempts (the first one's reply was lost): the stored entry stays as written.
    await insertRun(db.store.db, {
      id: `sub-${randomUUID()}`,
      agentId: s.agentId,
      parent: s.sessionKey,
      status: 'running',
      task: 'Second child with a much longer task text than the first one has',
      createdAt: new Date(),
    });
    const retry = await activities.writeCompactionRecord(input);
    expect(first.inserted).toBe(true);
    expect(retry).toEqual({ entryId: first.entryId, inserted: false, tokensAfter: first.tokensAfter });
    const summary = await summaryOf(db.store.db, s.agentId, s.sessionKey);
    expect(summary).toContain('First child');
    expect(summary).not.toContain('Second child');
    expect(Number((await getSession(db.store.db, s.agentId, s.sessionKey))!.context_tokens)).toBe(first.tokensAfter);
  });
});
