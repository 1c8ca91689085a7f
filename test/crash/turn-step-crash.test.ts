/**
 * SIGKILL a worker while a fast database step of a turn waits on a table lock the test holds:
 * beginTurn (the session upsert), prepareContext (the active-window read), and the assistant append.
 * PostgreSQL only: PGlite over a socket runs one statement at a time for every connection, so a lock
 * held by the test would stall the whole database instead of one waiting statement.
 */
import { Client as PgClient } from 'pg';
import { describeOnPostgres, postgres } from '../support/postgres-only';
import { fakeReply, type FakeStep } from '../../src/testing';
import { crashSuite, entryText, gate, storedTranscript } from '../support/crash-rig';
import { holdTableLock, lockTable, type TableLock } from '../support/crash-db-lock';
import type { WorkerProcess } from '../support/temporal';
import type { KeelClient } from '../../src/client/keel-client';
import type { TurnResult } from '../../src/protocol';
import { getSession } from '../../src/store/sessions-repo';
import { DEFAULTS } from '../../src/config/defaults';
import { waitUntil } from '../support/wait-until';

const suite = crashSuite();

describeOnPostgres(
  'a worker SIGKILLed while a turn step waits on the database',
  'PGlite over a socket cannot hold a table lock for one connection',
  () => {
    const locks: TableLock[] = [];
    // Declared before the rig: the locks are released while the rig's database is still open.
    afterEach(async () => {
      await Promise.all(locks.splice(0).map((l) => l.release()));
    });
    const rig = suite.rigPerTest(postgres!);
    let client: KeelClient;
    beforeEach(() => {
      client = rig.client({ modelHeartbeatTimeoutMs: 2_000, toolHeartbeatTimeoutMs: 2_000 });
    });

    /** Ends one PostgreSQL backend, as the server does when its client is gone. */
    async function terminateBackend(url: string, pid: number): Promise<void> {
      const admin = new PgClient({ connectionString: url });
      await admin.connect();
      try {
        await admin.query('select pg_terminate_backend($1)', [pid]);
      } finally {
        await admin.end();
      }
    }

    async function lock(table: string): Promise<TableLock> {
      const l = await holdTableLock(rig.database.url, table);
      locks.push(l);
      return l;
    }

    /** Every stored entry once: roles in order, unique ids, the texts given. */
    async function expectTranscript(expected: Array<[role: string, text: string]>): Promise<void> {
      const { entries } = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
      expect(entries.map((e) => [e.role, entryText(e)])).toEqual(expected);
      expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    }

    /** Answers turn one on a first worker (turn two's answer waits in the script) and returns that worker. */
    async function firstWorkerAfterTurnOne(): Promise<WorkerProcess> {
      rig.fake.enqueue(fakeReply.text('first answer'), fakeReply.text('second answer'));
      const first = await rig.startReadyWorker();
      expect((await client.sendMessage(rig.sessionKey, 'turn one')).reply).toBe('first answer');
      return first;
    }

    /** The session's counters hold this turn's usage once: the reply and its usage are written together or not at all. */
    async function expectUsageCountedOnce(result: TurnResult): Promise<void> {
      const session = await getSession(rig.store.db, rig.agentId, rig.sessionKey);
      const prompt = (u: { inputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number }) =>
        u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0);
      expect(result.usage.outputTokens).toBeGreaterThan(0);
      expect({
        output: Number(session!.output_tokens),
        prompt:
          Number(session!.input_tokens) + Number(session!.cache_read_tokens) + Number(session!.cache_write_tokens),
      }).toEqual({
        output: result.usage.outputTokens,
        prompt: prompt(result.usage),
      });
    }

    /** A new worker finishes turn two once: both turns stored once each, in order. */
    async function expectTurnTwoFinishedByNewWorker(reply: Promise<TurnResult>): Promise<void> {
      await rig.startReadyWorker();
      expect(await reply).toMatchObject({ reply: 'second answer', turn: 2 });
      await expectTranscript([
        ['user', 'turn one'],
        ['assistant', 'first answer'],
        ['user', 'turn two'],
        ['assistant', 'second answer'],
      ]);
    }

    it('finishes the turn once after SIGKILL during its begin (session read blocked), the earlier turn intact', async () => {
      const first = await firstWorkerAfterTurnOne();
      // A known session’s row is only read in the turn’s begin (no upsert): only an ACCESS EXCLUSIVE lock holds a read.
      const sessions = await lockTable(rig.database.url, 'sessions', 'ACCESS EXCLUSIVE');
      locks.push(sessions.lock);
      await sessions.granted;
      const reply = client.sendMessage(rig.sessionKey, 'turn two');
      await sessions.lock.waitForBlocked(/select .* from "sessions"/i);
      expect(rig.fake.requests).toHaveLength(1);
      await first.kill('SIGKILL');
      await sessions.lock.release();

      await expectTurnTwoFinishedByNewWorker(reply);
      expect(rig.fake.requests).toHaveLength(2);
      rig.fake.assertScriptConsumed();
    });

    it('finishes the turn once after SIGKILL during prepareContext (active-window read blocked), before any model call', async () => {
      const first = await firstWorkerAfterTurnOne();
      // Writes wait on `writes`; once beginTurn's user append is queued, an ACCESS EXCLUSIVE request
      // queues behind it, so the append goes through and the next read (callModel's) waits.
      const writes = await lock('transcript_entries');
      const reply = client.sendMessage(rig.sessionKey, 'turn two');
      await writes.waitForBlocked(/insert into "transcript_entries"/i);
      const reads = await lockTable(rig.database.url, 'transcript_entries', 'ACCESS EXCLUSIVE');
      locks.push(reads.lock);
      await writes.waitForBlocked(/LOCK TABLE/i);
      await writes.release();
      await reads.granted;
      await reads.lock.waitForBlocked(/select .* from "transcript_entries"/i);
      expect(rig.fake.requests).toHaveLength(1);
      await first.kill('SIGKILL');
      await reads.lock.release();

      await expectTurnTwoFinishedByNewWorker(reply);
      rig.fake.assertScriptConsumed();
    });

    it('finishes the turn once after SIGKILL during the assistant append; the dead worker’s late insert is reused, not duplicated', async () => {
      const answered = gate();
      let calls = 0;
      rig.fake.respondWith(async (): Promise<FakeStep | undefined> => {
        if (++calls > 1) return undefined;
        await answered.opened;
        return fakeReply.text('the only answer');
      });
      const first = await rig.startReadyWorker();

      const reply = client.sendMessage(rig.sessionKey, 'append me once');
      await rig.fake.waitForRequests(1, 60_000);
      const writes = await lock('transcript_entries');
      answered.open();
      await writes.waitForBlocked(/insert into "transcript_entries"/i);
      await first.kill('SIGKILL');
      await writes.release();

      await rig.startReadyWorker();
      const result = await reply;
      expect(result.reply).toBe('the only answer');
      await expectTranscript([
        ['user', 'append me once'],
        ['assistant', 'the only answer'],
      ]);
      // The retried callModel found the stored reply (written by the killed worker's still-queued insert) and did not call the model again.
      expect(rig.fake.requests).toHaveLength(1);
      // That insert counted the turn; the retry that found its reply did not count it again.
      await expectUsageCountedOnce(result);
      rig.fake.assertScriptConsumed();
    });

    // Regression: callModel used to ignore that its append inserted nothing and return the reply it got
    // from the model, not the one stored under the same entry id: the caller got "answer from the retry"
    // while the transcript (and every later turn) held "answer from the killed attempt". A retry calls
    // the model again only when the killed attempt could not hold its reply: here it is too large to.
    it('returns the reply it stored when the dead worker’s queued append lands before the retry’s own (late-write race)', async () => {
      const answered = gate();
      const tooLargeToHold = ` ${'x'.repeat(DEFAULTS.maxHeldReplyBytes)}`;
      let calls = 0;
      rig.fake.respondWith(async (): Promise<FakeStep | undefined> => {
        calls++;
        if (calls === 1) {
          await answered.opened;
          return fakeReply.text(`answer from the killed attempt${tooLargeToHold}`);
        }
        return calls === 2 ? fakeReply.text(`answer from the retry${tooLargeToHold}`) : undefined;
      });
      const first = await rig.startReadyWorker();

      const reply = client.sendMessage(rig.sessionKey, 'race me');
      await rig.fake.waitForRequests(1, 60_000);
      const writes = await lock('transcript_entries');
      answered.open();
      await writes.waitForBlocked(/insert into "transcript_entries"/i);
      await first.kill('SIGKILL');

      // The lock stays held: the retry reads no stored reply, calls the model again, and queues its
      // append behind the dead worker's, which PostgreSQL still runs once the lock is released.
      await rig.startReadyWorker();
      await rig.fake.waitForRequests(2, 60_000);
      await writes.waitForBlocked(/insert into "transcript_entries"/i, 2);
      await writes.release();

      const result = await reply;
      const { entries } = await storedTranscript(rig.store, rig.agentId, rig.sessionKey);
      expect(entries.map((e) => e.role)).toEqual(['user', 'assistant']);
      expect(entries[1]!.id).toBe(result.assistantEntryId);
      // The caller must be told what the transcript holds (the next turn's model sees the stored one).
      expect(result.reply).toBe(entryText(entries[1]!));
      // Counted once: by the dead attempt whose reply landed, not again by the retry whose append inserted nothing.
      await expectUsageCountedOnce(result);
      rig.fake.assertScriptConsumed();
    });

    it('stores the reply the killed attempt held, without calling the model again, when its write never landed', async () => {
      const answered = gate();
      let calls = 0;
      rig.fake.respondWith(async (): Promise<FakeStep | undefined> => {
        if (++calls > 1) return undefined;
        await answered.opened;
        return fakeReply.text('the held answer');
      });
      const first = await rig.startReadyWorker();

      const reply = client.sendMessage(rig.sessionKey, 'hold me');
      await rig.fake.waitForRequests(1, 60_000);
      const writes = await lock('transcript_entries');
      answered.open();
      const [append] = await writes.waitForBlocked(/insert into "transcript_entries"/i);
      // The reply reached Temporal in the attempt's heartbeat details before the worker died.
      const handle = client.temporal.workflow.getHandle(client.identify(rig.sessionKey).workflowId);
      await waitUntil(
        'the reply held in heartbeat details',
        async () =>
          ((await handle.describe()).raw.pendingActivities ?? []).some(
            (a) => (a.heartbeatDetails?.payloads?.length ?? 0) > 0,
          ),
        30_000,
      );
      await first.kill('SIGKILL');
      // The dead worker's queued append dies with its connection: nothing of its reply is stored.
      await terminateBackend(rig.database.url, append!.pid);
      await writes.release();

      await rig.startReadyWorker();
      const result = await reply;
      expect(result.reply).toBe('the held answer');
      await expectTranscript([
        ['user', 'hold me'],
        ['assistant', 'the held answer'],
      ]);
      expect(rig.fake.requests).toHaveLength(1);
      await expectUsageCountedOnce(result);
      rig.fake.assertScriptConsumed();
    });
  },
);
