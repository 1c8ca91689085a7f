import { sharedDatabases } from '../support/shared-database';
import { fakeReply } from '../../src/testing';
import { crashSuite } from '../support/crash-rig';
import { goodSummarizer, seedSession, startCompaction } from './support';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { getSession } from '../../src/store/sessions-repo';
import { getCompaction } from '../../src/store/compactions-repo';
import { allEntries, countCompactionEntries } from '../support/store-readers';

const suite = crashSuite();

describe.each(sharedDatabases())('a worker killed mid-compaction, on $name', (kind) => {
  const rig = suite.rigPerTest(kind);

  it('resumes on another worker after SIGKILL during a chunk activity: one compaction entry, counters right, nothing lost', async () => {
    const { fake, store } = rig;
    const s = await seedSession(store.db, 8);
    // The first summarizer call hangs (the worker dies while it is in flight); the retry is answered.
    fake.enqueue(fakeReply.text('never delivered', { delayMs: 60_000 }));
    fake.respondWith(goodSummarizer);
    const first = await rig.startReadyWorker();

    const handle = await startCompaction({ client: rig.client(), taskQueue: rig.taskQueue }, s, {
      summarizeHeartbeatTimeoutMs: 2_000,
    });
    await fake.waitForRequests(1, 60_000);
    await first.kill('SIGKILL');
    expect(first.child.signalCode).toBe('SIGKILL');

    await rig.startInProcessWorker();
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'succeeded', degraded: false, firstKeptEntryId: 'm6' });
    expect(fake.requests).toHaveLength(2);
    expect(await countCompactionEntries(store.db, s.agentId, s.sessionId)).toBe(1);
    const session = await getSession(store.db, s.agentId, s.sessionKey);
    expect(session).toMatchObject({ compaction_count: 1, context_tokens: result.tokensAfter, compaction_failures: 0 });
    expect(await getCompaction(store.db, s.agentId, result.compactionId)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    });
    // Non-destructive: every message is still stored, and the active window is the summary plus the kept tail.
    const all = await allEntries(store.db, s.agentId, s.sessionId);
    expect(all.filter((e) => e.type === 'message').map((e) => e.id)).toEqual(s.entryIds);
    const active = await loadActiveEntries(store.db, s.agentId, s.sessionId);
    expect(active.rows.map((r) => r.id)).toEqual(['m6', 'm7']);
    expect(active.compaction!.summary).toContain('/srv/app/module-0.ts');
    fake.assertScriptConsumed();
  });
});
