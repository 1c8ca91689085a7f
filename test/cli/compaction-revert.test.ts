import { testDatabases, freshSchemaUrl } from '../support/databases';
import { fakeReply, type FakeRequest } from '../../src/testing';
import { integrationSuite, type WorkerContext } from '../support/integration';
import {
  freshDurableAgent,
  isFlushRequest,
  isSummarizerRequest,
  lastUserText,
  realisticMessage,
  routedResponder,
} from '../support/durable-turn-helpers';
import { promptOf } from '../compaction-workflow/support';
import { extractIdentifiers } from '../../src/compaction/identifiers';
import { keel } from '../support/keel-cli';
import { openStore, type Store } from '../../src/store/connect';
import { getSession } from '../../src/store/sessions-repo';
import { getCompaction } from '../../src/store/compactions-repo';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { compactionSpans } from '../../src/store/history-repo';
import { runDoctor } from '../../src/operations/doctor/doctor';
import { compactionsList } from '../../src/cli/compactions';
import { sessionCompactionNote } from '../../src/operations/compactions/compactions';
import { compactionsCompare, compactionsRerun, compactionsRevert } from '../../src/cli/compaction-edits';
import { EXTRACTIVE_SUMMARY_HEADER } from '../../src/compaction/extractive-summary';
import type { CompactionEntry } from '../../src/context/types';
import { KeelOperations } from '../../src/operations/keel-operations';
import { loadKeelSettings } from '../../src/config/agent-config';
import { CompactionNotFoundError, UnknownApprovalError, UnknownSessionError } from '../../src/operations/errors';
import { sessionsList, sessionStatusReport } from '../../src/operations/sessions/session-views';
import {
  compactionEdit,
  compactionsList as compactionsListView,
  sessionCompactions,
} from '../../src/operations/compactions/compaction-views';

/**
 * Reversible compaction end to end: a session compacts through its workflow, then an operator reverts,
 * reverts the revert, reruns with another model and instructions (applied), and compares; what the
 * next model request carries and what PostgreSQL holds are checked after each step. On PostgreSQL the
 * revert runs as a real `keel` process (an in-memory PGlite has one owner: the test, which calls the
 * command's function instead).
 */
const suite = integrationSuite();

/** Each turn plants identifiers the summaries must keep. */
const PLANTED: Record<number, string> = {
  1: 'ticket OPS-1101 and /srv/app/alpha.ts',
  2: 'host db-primary.internal and /srv/app/bravo.ts',
  3: 'ticket OPS-3303 and /srv/app/charlie.ts',
  4: 'commit 9f3c2ab71d and /srv/app/delta.ts',
};
const RERUN_MODEL = 'claude-rerun-model';
const RERUN_FOCUS = 'FOCUS-ON-DEPLOYS';

/** Conversation turns answer "answer N" (and some detail); summaries keep every identifier; a rerun's says so. */
function responder(request: FakeRequest) {
  if (isSummarizerRequest(request) && promptOf(request).includes(RERUN_FOCUS)) {
    return fakeReply.text(
      `Rerun summary. Identifiers: ${extractIdentifiers(promptOf(request).replace(/\\n/g, '\n'), 'strict').join(' ')}`,
    );
  }
  // Answers of a real length (a summary of a few turns is smaller than they are), whose first sentence,
  // the one a summary's decisions quote, stays short.
  return routedResponder((r) =>
    fakeReply.text(realisticMessage(`answer ${/turn (\d+)/.exec(lastUserText(r))?.[1] ?? '?'}.`)),
  )(request);
}

/** The conversation request of turn `n` (not a summarizer or flush call), as the model received it. */
function turnRequest(fake: WorkerContext['fake'], n: number, since: number): string {
  const found = fake.requests
    .slice(since)
    .filter((r) => !isSummarizerRequest(r) && !isFlushRequest(r) && lastUserText(r).includes(`turn ${n}:`));
  expect(found).toHaveLength(1);
  return JSON.stringify(found[0]!.body.messages);
}

describe.each(testDatabases())('keel compactions revert, rerun and compare on $name', (database) => {
  let store: Store;
  let databaseUrl: string | undefined;
  beforeEach(async () => {
    if (database.name === 'postgres') {
      databaseUrl = await freshSchemaUrl(process.env.TEST_DATABASE_URL!);
      store = await openStore({ kind: 'postgres', url: databaseUrl, maxConnections: 5 });
    } else store = await database.open();
  });
  afterEach(async () => {
    await store.close();
  });

  /** `keel <args> --json` as a real process against this test's database and worker (PostgreSQL only). */
  async function keelJson<T>(w: WorkerContext, args: string[]): Promise<T> {
    const run = await keel([...args, '--json'], {
      DATABASE_URL: databaseUrl,
      ...suite.env.processEnv,
      KEEL_TASK_QUEUE: w.taskQueue,
      KEEL_CONFIG: undefined,
      KEEL_HOME: undefined,
    });
    if (run.code !== 0) throw new Error(`keel ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return JSON.parse(run.stdout) as T;
  }

  it('reverts a compaction, reverts the revert, applies a rerun with another model, and compares the summaries', () =>
    suite.withWorker(store, {}, async (w) => {
      const { client, fake } = w;
      fake.respondWith(responder);
      const since = fake.requests.length;
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const edit = {
        db: store.db,
        temporalClient: client.temporal,
        taskQueue: w.taskQueue,
        agentId: agent,
        json: true,
      };

      await client.sendMessage(key, `turn 1: ${PLANTED[1]}`);
      await client.sendMessage(key, `turn 2: ${PLANTED[2]}`);
      const c1 = await client.compact(key);
      await client.sendMessage(key, `turn 3: ${PLANTED[3]}`);
      await client.sendMessage(key, `turn 4: ${PLANTED[4]}`);
      const c2 = await client.compact(key);
      expect([c1.status, c2.status]).toEqual(['succeeded', 'succeeded']);
      const session = (await getSession(store.db, agent, key))!;
      const sessionId = session.session_id;
      const summaryOf = async (id: string) =>
        (
          (
            await store.db
              .selectFrom('transcript_entries')
              .select('payload')
              .where('id', '=', id)
              .executeTakeFirstOrThrow()
          ).payload as unknown as CompactionEntry
        ).summary;
      const s2 = await summaryOf(c2.entryId!);
      const messagesBefore = await store.db
        .selectFrom('transcript_entries')
        .select('id')
        .where('session_id', '=', sessionId)
        .where('type', '=', 'message')
        .execute();

      // After C2 the model sees C2's summary and none of turns 3–4 verbatim.
      await client.sendMessage(key, 'turn 5: status?');
      let sent = turnRequest(fake, 5, since);
      expect(sent).toContain(`Compaction ${c2.compactionId} summarized`);
      expect(sent).not.toContain('answer 3');

      // 1. Revert C2: C1's summary and the raw turns since C1 (3, 4, 5) are back.
      const revert =
        database.name === 'postgres'
          ? await keelJson<{ compaction: { id: string; revertOf: string; trigger: string } }>(w, [
              'compactions',
              'revert',
              c2.compactionId,
              '--agent',
              agent,
            ])
          : await compactionsRevert({ ...edit, id: c2.compactionId });
      expect(revert.compaction).toMatchObject({ revertOf: c2.compactionId, trigger: 'revert' });
      const r1 = revert.compaction.id;
      await client.sendMessage(key, 'turn 6: and now?');
      sent = turnRequest(fake, 6, since);
      expect(sent).toContain(`Compaction ${r1} summarized`);
      expect(sent).toContain(`turn 3: ${PLANTED[3]}`);
      expect(sent).toContain('answer 4');
      expect(sent).not.toContain(JSON.stringify(s2.slice(0, 60)).slice(1, -1));
      // In PostgreSQL: a row and an entry of its own, nothing deleted, the window's tokens on the session,
      // and the revert counted as a zero-yield compaction (the storm hold keeps threshold compaction off).
      const r1Row = (await getCompaction(store.db, agent, r1))!;
      expect(r1Row).toMatchObject({ trigger: 'revert', status: 'succeeded', revert_of: c2.compactionId, entry_id: r1 });
      const r1Entry = (
        await store.db.selectFrom('transcript_entries').select('payload').where('id', '=', r1).executeTakeFirstOrThrow()
      ).payload as unknown as CompactionEntry;
      expect(r1Entry).toMatchObject({
        revertOf: c2.compactionId,
        rangeOf: c1.entryId,
        firstKeptEntryId: c1.firstKeptEntryId,
      });
      const afterRevert = (await getSession(store.db, agent, key))!;
      expect(afterRevert.last_compaction_tokens_before).toBe(r1Row.tokens_after);
      expect(afterRevert.last_compaction_tokens_after).toBe(r1Row.tokens_after);
      expect(afterRevert.compaction_count).toBe(2);
      expect(await sessionCompactionNote(store.db, agent, key)).toContain(
        `window reverted by compaction ${r1} (revert of ${c2.compactionId})`,
      );
      const messagesNow = await store.db
        .selectFrom('transcript_entries')
        .select('id')
        .where('session_id', '=', sessionId)
        .where('type', '=', 'message')
        .execute();
      expect(messagesNow.map((m) => m.id)).toEqual(expect.arrayContaining(messagesBefore.map((m) => m.id)));
      // history_expand with the revert's id reaches the range of the summary it restored.
      const spans = await compactionSpans(store.db, agent, sessionId);
      expect(spans.find((s) => s.id === r1)).toEqual({ ...spans.find((s) => s.id === c1.entryId), id: r1 });

      // 2. Revert the revert: C2's window again.
      const r2 = (await compactionsRevert({ ...edit, id: r1 })).compaction.id;
      await client.sendMessage(key, 'turn 7: again?');
      sent = turnRequest(fake, 7, since);
      expect(sent).toContain(`Compaction ${r2} summarized`);
      expect(sent).not.toContain(`turn 3: ${PLANTED[3]}`);
      expect(sent).toContain('answer 6');
      expect((await loadActiveEntries(store.db, agent, sessionId)).compaction).toMatchObject({
        revertOf: r1,
        summary: s2,
        rangeOf: c2.entryId,
      });

      // 3. Rerun C2 with another model and instructions, applied: a new record linked to C2, and the model sees it.
      const summarizerCalls = fake.requests.length;
      const rerun = await compactionsRerun({
        ...edit,
        id: c2.compactionId,
        model: RERUN_MODEL,
        instructions: RERUN_FOCUS,
        apply: true,
      });
      const rerunRequests = fake.requests.slice(summarizerCalls).filter(isSummarizerRequest);
      expect(rerunRequests.length).toBeGreaterThanOrEqual(1);
      expect(rerunRequests.every((r) => r.body.model === RERUN_MODEL)).toBe(true);
      // The rerun summarizes C2's range (turns 3–4), not the raw turns since.
      expect(promptOf(rerunRequests[0]!)).toContain('OPS-3303');
      expect(promptOf(rerunRequests[0]!)).not.toContain('turn 6');
      const rr = (await getCompaction(store.db, agent, rerun.compaction.id))!;
      expect(rr).toMatchObject({
        trigger: 'rerun',
        rerun_of: c2.compactionId,
        entry_id: rr.id,
        summarizer_model: RERUN_MODEL,
        degraded: false,
      });
      expect(rr.summarizer_calls).toBe(rerunRequests.length);
      expect(rr.summarizer_tokens).toBeGreaterThan(0);
      await client.sendMessage(key, 'turn 8: rerun?');
      sent = turnRequest(fake, 8, since);
      expect(sent).toContain('Rerun summary');
      expect(sent).toContain('answer 7');
      expect(sent).not.toContain(`turn 3: ${PLANTED[3]}`);

      // 4. Compare C2 with its rerun: the same range's identifiers, each summary's coverage.
      const comparison = await compactionsCompare({
        db: store.db,
        agentId: agent,
        a: c2.compactionId,
        b: rr.id,
        json: true,
      });
      expect(comparison.b.summary).toContain('Rerun summary');
      expect(comparison.coverage.identifiers).toEqual(expect.arrayContaining(['OPS-3303', '/srv/app/delta.ts']));
      expect(comparison.coverage.identifiers).not.toContain('/srv/app/alpha.ts');
      expect(comparison.coverage.a.kept.length + comparison.coverage.a.missing.length).toBe(
        comparison.coverage.identifiers.length,
      );
      expect(comparison.coverage.b.kept).toEqual(expect.arrayContaining(['OPS-3303', '/srv/app/delta.ts']));
      let people = '';
      await compactionsCompare({
        db: store.db,
        agentId: agent,
        a: c2.compactionId,
        b: rr.id,
        width: 120,
        write: (t) => void (people += t),
      });
      expect(people).toContain(' │ ');
      expect(people).toMatch(new RegExp(`${rr.id}: kept \\d+/${comparison.coverage.identifiers.length}`));

      // A rerun of C1 (no longer the window) is recorded, not applied: its summary on its row, the session unchanged.
      await expect(compactionsRerun({ ...edit, id: c1.compactionId, apply: true })).rejects.toThrow(
        /not the session's window now/,
      );
      const recorded = (await compactionsRerun({ ...edit, id: c1.compactionId })).compaction;
      const recordedRow = (await getCompaction(store.db, agent, recorded.id))!;
      expect(recordedRow).toMatchObject({
        trigger: 'rerun',
        rerun_of: c1.compactionId,
        entry_id: null,
        status: 'succeeded',
      });
      expect(recordedRow.summary).toContain('/srv/app/alpha.ts');
      expect((await loadActiveEntries(store.db, agent, sessionId)).compaction!.id).toBe(rr.id);
      const c1Compared = await compactionsCompare({
        db: store.db,
        agentId: agent,
        a: c1.compactionId,
        b: recorded.id,
        json: true,
      });
      expect(c1Compared.coverage.identifiers).toEqual(expect.arrayContaining(['OPS-1101', '/srv/app/bravo.ts']));
      expect(c1Compared.coverage.b.missing).toEqual([]);

      // Doctor counts compactions, not the reverts' entries: the session's counter agrees with the transcript.
      const doctor = await runDoctor(store.db, {
        fix: false,
        agentId: agent,
        stuckAfterMinutes: 60,
        now: new Date(),
        workflows: { skipped: 'not asked' },
      });
      expect(doctor.findings.filter((f) => f.check === 'counters')).toEqual([]);

      // Reverting the first compaction restores no summary: the whole transcript is the window again.
      const r3 = (await compactionsRevert({ ...edit, id: c1.compactionId })).compaction;
      expect(r3).toMatchObject({ revertOf: c1.compactionId });
      const whole = await loadActiveEntries(store.db, agent, sessionId);
      expect(whole.compaction).toBeUndefined();
      expect(JSON.stringify(whole.rows.map((r) => r.payload))).toContain(`turn 1: ${PLANTED[1]}`);
      expect(r3.tokensAfter).toBeGreaterThan(0);
      expect((await getSession(store.db, agent, key))!.context_tokens).toBe(r3.tokensAfter);

      // The operator list names each edit.
      let listed = '';
      await compactionsList({ db: store.db, agentId: agent, write: (t) => void (listed += t) });
      expect(listed).toContain(`revert of ${c2.compactionId}`);
      expect(listed).toContain(`rerun of ${c2.compactionId} (applied)`);
      expect(listed).toContain(`rerun of ${c1.compactionId} (recorded, not applied)`);
    }));

  it('KeelOperations lists, shows and reverts through the store and Temporal, and refuses with typed errors', () =>
    suite.withWorker(store, {}, async (w) => {
      const { client, fake } = w;
      fake.respondWith(responder);
      const since = fake.requests.length;
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;
      const ops = new KeelOperations({
        client,
        db: store.db,
        settings: loadKeelSettings({ env: {}, overrides: { taskQueue: w.taskQueue } }),
      });

      await client.sendMessage(key, `turn 1: ${PLANTED[1]}`);
      await client.sendMessage(key, `turn 2: ${PLANTED[2]}`);
      const c1 = await client.compact(key);
      const { session_id: sessionId } = (await getSession(store.db, agent, key))!;

      // Every view is its schema: what the OpenAPI document reads is what the operation returns.
      const listed = sessionsList.parse(await ops.sessions.list({ agentId: agent }));
      expect(listed.sessions).toEqual([
        expect.objectContaining({ sessionKey: key, sessionId, turns: 2, compactions: 1 }),
      ]);
      const status = sessionStatusReport.parse(await ops.sessions.status({ sessionKey: key }));
      expect(status).toMatchObject({ sessionKey: key, turnsCompleted: 2, compactionCount: 1, turns: 2 });
      const { compactions } = compactionsListView.parse(await ops.compactions.list({ agentId: agent }));
      expect(compactions.map((c) => c.id)).toEqual([c1.compactionId]);
      const shown = await ops.compactions.show({ agentId: agent, id: c1.compactionId });
      expect(shown.detail.summary).toContain('OPS-1101');
      const transcript = await ops.transcripts.page({ agentId: agent, sessionId, page: 1, pageSize: 100 });
      const stored = await store.db
        .selectFrom('transcript_entries')
        .select('id')
        .where('agent_id', '=', agent)
        .where('session_id', '=', sessionId)
        .execute();
      expect(transcript.total).toBe(stored.length);
      expect((await ops.fleet.page({ agentId: agent, page: 1, pageSize: 10 })).total).toBe(1);

      // The revert runs as a compaction workflow on Temporal and lands in PostgreSQL; the next turn sees the whole transcript.
      const revert = compactionEdit.parse(await ops.compactions.revert({ agentId: agent, id: c1.compactionId }));
      expect(revert.compaction).toMatchObject({ revertOf: c1.compactionId, trigger: 'revert', status: 'succeeded' });
      const described = await client.temporal.workflow.getHandle(revert.workflowId).describe();
      expect(described.status.name).toBe('COMPLETED');
      expect(described.memo).toMatchObject({ compactionId: revert.compaction.id });
      expect(await getCompaction(store.db, agent, revert.compaction.id)).toMatchObject({
        trigger: 'revert',
        revert_of: c1.compactionId,
        entry_id: revert.compaction.id,
      });
      await client.sendMessage(key, 'turn 3: still there?');
      expect(turnRequest(fake, 3, since)).toContain(`turn 1: ${PLANTED[1]}`);
      const ofSession = sessionCompactions.parse(await ops.compactions.ofSession({ agentId: agent, sessionKey: key }));
      expect(ofSession.compactions.map((c) => c.id).sort()).toEqual([c1.compactionId, revert.compaction.id].sort());

      // Refusals are the operation errors, each with its kind (what the CLI's exit code and the API's status read).
      const unknownCompaction = ops.compactions.show({ agentId: agent, id: 'no-such-compaction' });
      await expect(unknownCompaction).rejects.toBeInstanceOf(CompactionNotFoundError);
      await expect(unknownCompaction).rejects.toMatchObject({ kind: 'not-found', field: 'id' });
      const unknownSession = ops.sessions.status({ sessionKey: `agent:${agent}:nobody` });
      await expect(unknownSession).rejects.toBeInstanceOf(UnknownSessionError);
      await expect(unknownSession).rejects.toMatchObject({ kind: 'unknown-session', field: 'sessionKey' });
      await expect(ops.approvals.decide({ id: 'no-such-approval', decision: 'approve' })).rejects.toBeInstanceOf(
        UnknownApprovalError,
      );
      expect(await ops.approvals.list({ agentId: agent })).toEqual({ approvals: [] });
      expect(await ops.subagents.list({ agentId: agent })).toEqual({ subagents: [] });
    }));

  it('past the per-session summarizer spend limit, a compaction writes the extractive summary without calling the model', () =>
    suite.withWorker(store, { config: { summarizerSessionCalls: 1 } }, async (w) => {
      const { client, fake } = w;
      fake.respondWith(responder);
      const agent = freshDurableAgent();
      const key = `agent:${agent}:main`;

      await client.sendMessage(key, `turn 1: ${PLANTED[1]}`);
      const before1 = fake.requests.length;
      const first = await client.compact(key);
      expect(fake.requests.slice(before1).filter(isSummarizerRequest)).toHaveLength(1);
      expect(first.degraded).toBe(false);

      await client.sendMessage(key, `turn 2: ${PLANTED[2]}`);
      const before2 = fake.requests.length;
      const second = await client.compact(key);
      expect(fake.requests.slice(before2).filter(isSummarizerRequest)).toHaveLength(0);
      expect(second).toMatchObject({ status: 'succeeded', degraded: true });
      const row = (await getCompaction(store.db, agent, second.compactionId))!;
      expect(row.spend_limited).toContain('KEEL_SUMMARIZER_SESSION_CALLS');
      expect(row.summarizer_calls).toBe(0);
      expect((await getCompaction(store.db, agent, first.compactionId))!.summarizer_calls).toBe(1);
      const session = (await getSession(store.db, agent, key))!;
      const active = await loadActiveEntries(store.db, agent, session.session_id);
      expect(active.compaction!.summary.startsWith(EXTRACTIVE_SUMMARY_HEADER)).toBe(true);
      expect(active.compaction!.summary).toContain('/srv/app/bravo.ts');
      let listed = '';
      await compactionsList({ db: store.db, agentId: agent, write: (t) => void (listed += t) });
      expect(listed).toContain('summarizer spend limit reached: 1 of 1 calls for this session');
      expect(await sessionCompactionNote(store.db, agent, key)).toContain(
        `last compaction ${second.compactionId}: summarizer spend limit reached`,
      );

      // A rerun obeys the limit too: the extractive summarizer writes it, the model gets no call.
      const before3 = fake.requests.length;
      const rerun = await compactionsRerun({
        db: store.db,
        temporalClient: client.temporal,
        taskQueue: w.taskQueue,
        agentId: agent,
        id: second.compactionId,
        json: true,
      });
      expect(fake.requests.slice(before3).filter(isSummarizerRequest)).toHaveLength(0);
      expect(rerun.compaction).toMatchObject({
        rerunOf: second.compactionId,
        degraded: true,
        spendLimited: expect.stringContaining('KEEL_SUMMARIZER_SESSION_CALLS'),
      });
    }));
});
