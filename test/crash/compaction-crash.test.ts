/**
 * SIGKILL a worker while the compaction record write (`writeCompactionRecord`: compaction entry and
 * session counters in one transaction) waits on a table lock the test holds. PostgreSQL only: PGlite
 * over a socket runs one statement at a time for every connection, so it cannot hold one waiting.
 */
import { describeOnPostgres, postgres } from '../support/postgres-only';
import { fakeReply, type FakeRequest, type FakeStep } from '../../src/testing';
import { crashSuite, entryText, gate, storedTranscript } from '../support/crash-rig';
import { holdTableLock, type TableLock } from '../support/crash-db-lock';
import { goodSummarizer, promptOf } from '../compaction-workflow/support';
import { getCompaction } from '../../src/store/compactions-repo';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { countCompactionEntries } from '../support/store-readers';
import { realisticMessage } from '../support/durable-turn-helpers';

/** Replies of a real size: a summary of them is smaller, so the compaction reclaims tokens and writes. */
const answer = (i: number) => realisticMessage(`answer ${i}`);

/**
 * The compaction workflow's store activities heartbeat while they run, so Temporal retries the killed
 * record write after their heartbeat timeout of seconds; the allowance is for a loaded machine.
 */
const RECORD_WRITE_RETRY_ALLOWANCE_MS = 3 * 60_000;

const suite = crashSuite();

describeOnPostgres(
  'a worker SIGKILLed during the compaction record write',
  'PGlite over a socket cannot hold a table lock for one connection',
  () => {
    let lock: TableLock | undefined;
    // Declared before the rig: the lock is released while the rig's database is still open.
    afterEach(async () => {
      await lock?.release();
      lock = undefined;
    });
    const rig = suite.rigPerTest(postgres!);

    it(
      'writes exactly one compaction entry with counters right after a new worker retries the write; no message lost and the next turn works',
      async () => {
        const { fake } = rig;
        const summarize = gate();
        const summarizerRequests: FakeRequest[] = [];
        fake.enqueue(fakeReply.text(answer(1)), fakeReply.text(answer(2)), fakeReply.text(answer(3)));
        // After the scripted turns: the pre-compaction memory flush stores nothing; summaries wait for the gate.
        fake.respondWith(async (request): Promise<FakeStep | undefined> => {
          if (promptOf(request).includes('Pre-compaction memory flush')) return fakeReply.text('NO_REPLY');
          summarizerRequests.push(request);
          await summarize.opened;
          return goodSummarizer(request);
        });
        const first = await rig.startReadyWorker();
        const client = rig.client({ modelHeartbeatTimeoutMs: 2_000, summarizeHeartbeatTimeoutMs: 2_000 });
        for (let i = 1; i <= 3; i++) {
          expect((await client.sendMessage(rig.sessionKey, `turn ${i}: deploy /srv/app/service-${i}.ts`)).reply).toBe(
            answer(i),
          );
        }

        const compaction = client.compact(rig.sessionKey, { keepRecentTokens: 0 });
        const summarizing = fake.requests.length;
        await fake.waitForRequests(summarizing + 1, 60_000);
        while (summarizerRequests.length === 0) await fake.waitForRequests(fake.requests.length + 1, 60_000);
        // Reads go on (plan, summaries, guard); the record write's insert waits on this lock.
        lock = await holdTableLock(rig.database.url, 'transcript_entries');
        summarize.open();
        await lock.waitForBlocked(/insert into "transcript_entries"/i);
        await first.kill('SIGKILL');
        expect(first.child.signalCode).toBe('SIGKILL');
        await lock.release();
        // The killed worker's transaction died with its connection: nothing of the record is stored yet.
        const before = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
        expect(await countCompactionEntries(rig.store.db, rig.agentId, before.session.session_id)).toBe(0);
        expect(before.session.compaction_count).toBe(0);

        await rig.startReadyWorker();
        const result = await compaction;
        expect(result).toMatchObject({ status: 'succeeded', degraded: false });

        const { session, entries } = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
        expect(await countCompactionEntries(rig.store.db, rig.agentId, session.session_id)).toBe(1);
        expect(session).toMatchObject({ compaction_count: 1, compaction_failures: 0 });
        // The stored context is the compacted conversation plus the prompt's overhead (system prompt, tools).
        expect(session.context_tokens).toBeGreaterThan(result.tokensAfter);
        expect(session.context_tokens).toBeLessThan(result.tokensBefore + 5_000);
        expect(await getCompaction(rig.store.db, rig.agentId, result.compactionId)).toMatchObject({
          status: 'succeeded',
          trigger: 'manual',
        });
        // Every message is still stored, once; the compaction entry is the one the workflow reported.
        const messages = entries.filter((e) => e.type === 'message');
        expect(messages.map((e) => [e.role, entryText(e)])).toEqual([
          ['user', 'turn 1: deploy /srv/app/service-1.ts'],
          ['assistant', answer(1)],
          ['user', 'turn 2: deploy /srv/app/service-2.ts'],
          ['assistant', answer(2)],
          ['user', 'turn 3: deploy /srv/app/service-3.ts'],
          ['assistant', answer(3)],
        ]);
        expect(entries.filter((e) => e.type === 'compaction').map((e) => e.id)).toEqual([result.entryId]);
        expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
        const active = await loadActiveEntries(rig.store.db, rig.agentId, session.session_id);
        for (let i = 1; i <= 3; i++) expect(active.compaction!.summary).toContain(`/srv/app/service-${i}.ts`);

        // The session goes on from the summary.
        fake.respondWith(undefined);
        fake.enqueue(fakeReply.text('answer 4'));
        const next = await client.sendMessage(rig.sessionKey, 'turn 4');
        expect(next).toMatchObject({ reply: 'answer 4', turn: 4 });
        expect(JSON.stringify(fake.requests[fake.requests.length - 1]!.body)).toContain('/srv/app/service-1.ts');
        fake.assertScriptConsumed();
      },
      RECORD_WRITE_RETRY_ALLOWANCE_MS,
    );
  },
);
