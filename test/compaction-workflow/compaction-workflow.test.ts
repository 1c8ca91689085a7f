import { WorkflowFailedError } from '@temporalio/client';
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { appendMessages, goodSummarizer, promptOf, runCompaction, seedSession, startCompaction } from './support';
import { loadActiveEntries } from '../../src/store/entries-repo';
import { getSession } from '../../src/store/sessions-repo';
import { getCompaction, listCompactions, writeCompactionRecord } from '../../src/store/compactions-repo';
import { CompactionHooks, type AfterCompactionEvent, type BeforeCompactionEvent } from '../../src/compaction/hooks';
import { EXTRACTIVE_SUMMARY_HEADER } from '../../src/compaction/extractive-summary';
import { PRESERVED_IDENTIFIERS_HEADING } from '../../src/compaction/quality-guard';
import { compactionsList, compactionsRetry, compactionsShow } from '../../src/cli/compactions';
import { COMPACTION_TIMED_OUT } from '../../src/protocol';
import { countCompactionEntries } from '../support/store-readers';
import {
  registerCompactionProvider,
  type CompactionProviderRequest,
  type CompactionProviderResult,
} from '../../src/compaction/compaction-providers';

const suite = integrationSuite();

describe.each(testDatabases())('compactionWorkflow on a real Temporal dev server and $name', (database) => {
  const db = suite.storePerTest(database);

  it('summarizes chunks in parallel, merges, writes one compaction entry with counters, and fires each hook once', async () => {
    const before: BeforeCompactionEvent[] = [];
    const after: AfterCompactionEvent[] = [];
    const hooks = new CompactionHooks()
      .on('before_compaction', (e) => void before.push(e))
      .on('after_compaction', (e) => void after.push(e));
    await suite.withWorker(db.store, { deps: { compactionHooks: hooks } }, async (w) => {
      const { store, fake } = w;
      const s = await seedSession(store.db, 16);
      fake.respondWith(goodSummarizer);
      const sent = fake.requests.length;

      // A 1,000-token window leaves 1,000 × 0.4 − 100 (a tenth of it for the prompt) = 300 tokens per chunk: the 14 summarized messages need several.
      const result = await runCompaction(w, s, { contextWindowTokens: 1_000, keepRecentTokens: 200 });

      expect(result.status).toBe('succeeded');
      expect(result.degraded).toBe(false);
      expect(result.firstKeptEntryId).toBe('m14');
      expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
      const requests = fake.requests.slice(sent);
      const merges = requests.filter((r) => promptOf(r).includes('Merge them into ONE'));
      expect(merges).toHaveLength(1);
      expect(requests.length - merges.length).toBeGreaterThanOrEqual(2);
      // Every chunk request carries its own slice of the transcript, and none carries the kept tail.
      for (const r of requests.filter((x) => !merges.includes(x))) expect(promptOf(r)).not.toContain('Message 14:');

      expect(await countCompactionEntries(store.db, s.agentId, s.sessionId)).toBe(1);
      const session = await getSession(store.db, s.agentId, s.sessionKey);
      expect(session!.compaction_count).toBe(1);
      expect(session!.context_tokens).toBe(result.tokensAfter);
      expect(session!.compaction_failures).toBe(0);

      const row = await getCompaction(store.db, s.agentId, result.compactionId);
      expect(row).toMatchObject({
        status: 'succeeded',
        degraded: false,
        attempts: 1,
        tokens_after: result.tokensAfter,
        first_kept_entry_id: 'm14',
        entry_id: result.entryId,
      });

      const active = await loadActiveEntries(store.db, s.agentId, s.sessionId);
      expect(active.compaction!.summary).toContain('Merged summary');
      // The guard kept every planted identifier of the summarized messages.
      for (let i = 0; i < 14; i++) expect(active.compaction!.summary).toContain(`/srv/app/module-${i}.ts`);
      expect(active.rows.map((r) => r.id)).toEqual(['m14', 'm15']);

      expect(before).toHaveLength(1);
      expect(after).toHaveLength(1);
      expect(after[0]).toMatchObject({
        compactionId: result.compactionId,
        status: 'succeeded',
        degraded: false,
        tokensAfter: result.tokensAfter,
      });
    });
  });

  it("writes the registered compaction provider's summary, handed Keel's rules and billed on the row, and Keel's summarizer answers when it fails", async () => {
    const asked: CompactionProviderRequest[] = [];
    let answer: (r: CompactionProviderRequest) => Promise<CompactionProviderResult | undefined> = async (r) => ({
      // A summary that keeps what the guard checks: every identifier of the text.
      summary: `Provider summary.\n${[...new Set(r.text.match(/\/srv\/app\/module-\d+\.ts/g))].join('\n')}`,
      billing: {
        model: 'plugin-summarizer',
        inputTokens: 900,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 120,
      },
    });
    const unregister = registerCompactionProvider({
      id: 'plugin',
      summarize: (r) => (asked.push(r), answer(r)),
    });
    try {
      await suite.withWorker(db.store, { config: { compactionProvider: 'plugin' } }, async (w) => {
        const { store, fake } = w;
        const s = await seedSession(store.db, 6);
        const sent = fake.requests.length;
        const result = await runCompaction(w, s, { keepRecentTokens: 200 });
        expect(result.status).toBe('succeeded');
        // No summarizer request reached the model: the provider wrote the summary.
        expect(fake.requests.length).toBe(sent);
        expect(asked).toHaveLength(1);
        const request = asked[0]!;
        expect(request).toMatchObject({
          agentId: s.agentId,
          sessionId: s.sessionId,
          compactionId: result.compactionId,
        });
        expect(request.text).toContain('/srv/app/module-0.ts');
        // The same rules Keel's summarizer gets: the identifier policy and the decisions to quote.
        expect(request.prompt).toContain(request.instructions);
        expect(request.instructions).toMatch(/identifiers/i);
        expect(request.instructions).toMatch(/Decisions/);
        const active = await loadActiveEntries(store.db, s.agentId, s.sessionId);
        expect(active.compaction!.summary).toContain('Provider summary.');
        const row = await getCompaction(store.db, s.agentId, result.compactionId);
        expect(row).toMatchObject({
          summarizer_model: 'plugin-summarizer',
          summarizer_calls: 1,
          summarizer_input_tokens: 900,
          summarizer_output_tokens: 120,
        });

        // A throwing provider: Keel's summarizer writes the summary (an empty one too: compaction-providers.test.ts).
        answer = async () => {
          throw new Error('provider offline');
        };
        await appendMessages(store.db, s, 6, 6);
        fake.respondWith(goodSummarizer);
        const before = fake.requests.length;
        const next = await runCompaction(w, s, { keepRecentTokens: 200 });
        fake.respondWith(undefined);
        expect(next).toMatchObject({ status: 'succeeded', degraded: false });
        expect(fake.requests.length).toBeGreaterThan(before);
        expect((await loadActiveEntries(store.db, s.agentId, s.sessionId)).compaction!.summary).not.toContain(
          'Provider summary.',
        );
      });
    } finally {
      unregister();
    }
  });

  it('a compaction whose summary would not make the context smaller writes nothing and is skipped, automatic or manual', () =>
    suite.withWorker(db.store, {}, async (w) => {
      const { store, fake } = w;
      // Two short messages: the summary budget grows with what it replaces, but its floor still outweighs them.
      const s = await seedSession(store.db, 2);
      // A summarizer that writes far more than the short messages it summarizes.
      fake.respondWith(() =>
        fakeReply.text(`Chunk summary. ${'The user and the assistant discussed the migration at length. '.repeat(60)}`),
      );

      const result = await runCompaction(w, s, { trigger: 'threshold', keepRecentTokens: 100 });
      expect(result).toMatchObject({
        status: 'skipped',
        entryId: null,
        tokensAfter: result.tokensBefore,
        skip: { reason: 'no-gain', wouldBeTokens: expect.any(Number) },
      });
      expect(result.skip?.reason === 'no-gain' && result.skip.wouldBeTokens).toBeGreaterThanOrEqual(
        result.tokensBefore,
      );
      expect(await countCompactionEntries(store.db, s.agentId, s.sessionId)).toBe(0);
      expect(await getCompaction(store.db, s.agentId, result.compactionId)).toMatchObject({
        status: 'skipped',
        entry_id: null,
        tokens_after: result.tokensBefore,
      });
      // The session records a compaction that reclaimed nothing: the storm hold keeps the next turns from trying again.
      const session = await getSession(store.db, s.agentId, s.sessionKey);
      expect(session).toMatchObject({
        compaction_count: 0,
        last_compaction_tokens_before: result.tokensBefore,
        last_compaction_tokens_after: result.tokensBefore,
      });
      expect((await loadActiveEntries(store.db, s.agentId, s.sessionId)).rows).toHaveLength(2);

      // Asked for by a person, the same checkpoint is no success either: skipped, saying what it would have cost.
      const sent = fake.requests.length;
      const manual = await runCompaction(w, s, { trigger: 'manual', keepRecentTokens: 0 });
      expect(fake.requests.length).toBeGreaterThan(sent);
      expect(manual).toMatchObject({
        status: 'skipped',
        entryId: null,
        tokensAfter: manual.tokensBefore,
        skip: { reason: 'no-gain' },
      });
      expect(manual.skip?.reason === 'no-gain' && manual.skip.wouldBeTokens).toBeGreaterThan(manual.tokensBefore);
      expect(await getCompaction(store.db, s.agentId, manual.compactionId)).toMatchObject({
        status: 'skipped',
        trigger: 'manual',
        entry_id: null,
      });
      expect(await countCompactionEntries(store.db, s.agentId, s.sessionId)).toBe(0);
      expect((await loadActiveEntries(store.db, s.agentId, s.sessionId)).rows.map((r) => r.id)).toEqual(['m0', 'm1']);
      expect(await getSession(store.db, s.agentId, s.sessionKey)).toMatchObject({ compaction_count: 0 });
    }));

  it('recovers from a 429/529 storm through the activity retry policy (retry-after honoured)', () =>
    suite.withWorker(db.store, {}, async (w) => {
      const { store, fake } = w;
      const s = await seedSession(store.db, 6);
      fake.enqueue(fakeReply.rateLimited({ retryAfter: 1 }), fakeReply.overloaded({ retryAfter: 1 }));
      fake.respondWith(goodSummarizer);
      const sent = fake.requests.length;

      const result = await runCompaction(w, s);

      expect(result).toMatchObject({ status: 'succeeded', degraded: false });
      expect(fake.requests.length - sent).toBe(3);
      const row = await getCompaction(store.db, s.agentId, result.compactionId);
      expect(row).toMatchObject({ status: 'succeeded', degraded: false });
    }));

  it('writes a degraded extractive summary when every model attempt fails, and an operator retry writes a model summary', () =>
    suite.withWorker(db.store, {}, async (w) => {
      const { store, fake } = w;
      const s = await seedSession(store.db, 6);
      fake.respondWith(() => fakeReply.serverError());
      const sent = fake.requests.length;

      const degraded = await runCompaction(w, s);

      expect(degraded).toMatchObject({ status: 'succeeded', degraded: true });
      expect(fake.requests.length - sent).toBe(3); // one chunk, 3 attempts, then the extractive summary
      const first = await loadActiveEntries(store.db, s.agentId, s.sessionId);
      expect(first.compaction!.summary.startsWith(EXTRACTIVE_SUMMARY_HEADER)).toBe(true);
      expect(first.compaction!.summary).not.toContain('No prior history');
      for (let i = 0; i < 4; i++) expect(first.compaction!.summary).toContain(`/srv/app/module-${i}.ts`);
      const degradedRow = await getCompaction(store.db, s.agentId, degraded.compactionId);
      expect(degradedRow).toMatchObject({ status: 'succeeded', degraded: true });
      // The row names why the summary is extractive: the model's error, not the activity failure's wrapper.
      expect(degradedRow!.error).toMatch(/Summarization failed for all 1 chunk\(s\) \(Model API server error \(500\)/);
      expect(degradedRow!.error).not.toContain('Activity task failed');

      const failed = await compactionsList({ db: store.db, failed: true, agentId: s.agentId, json: true });
      expect(failed.compactions.map((c) => c.id)).toEqual([degraded.compactionId]);

      fake.respondWith(goodSummarizer);
      const temporalClient = w.client.temporal;
      const retry = await compactionsRetry({
        db: store.db,
        temporalClient,
        taskQueue: w.taskQueue,
        agentId: s.agentId,
        id: degraded.compactionId,
        keepRecentTokens: 0,
        json: true,
      });
      expect(retry.started).toBe(true);
      const result = (await temporalClient.workflow.getHandle(retry.workflowId).result()) as {
        compactionId: string;
        degraded: boolean;
      };
      expect(result).toMatchObject({ compactionId: retry.compactionId, degraded: false });

      const row = await getCompaction(store.db, s.agentId, retry.compactionId!);
      expect(row).toMatchObject({
        status: 'succeeded',
        degraded: false,
        retry_of: degraded.compactionId,
        trigger: 'manual',
      });
      const shown = await compactionsShow({ db: store.db, agentId: s.agentId, id: retry.compactionId!, json: true });
      expect(shown.compaction.retryOf).toBe(degraded.compactionId);
      const session = await getSession(store.db, s.agentId, s.sessionKey);
      expect(session!.compaction_count).toBe(2);
      const active = await loadActiveEntries(store.db, s.agentId, s.sessionId);
      expect(active.compaction!.summary).toContain('Chunk summary');
    }));

  it('re-distils: a second compaction summarizes the previous summary plus only the entries since its firstKeptEntryId', () =>
    suite.withWorker(db.store, {}, async (w) => {
      const { store, fake } = w;
      const s = await seedSession(store.db, 8);
      fake.respondWith(goodSummarizer);
      const first = await runCompaction(w, s);
      expect(first.firstKeptEntryId).toBe('m6');
      const firstSummary = (await loadActiveEntries(store.db, s.agentId, s.sessionId)).compaction!.summary;
      // The summarizer wrote no "Last user request" section; the quality guard added it from the range.
      expect(firstSummary).toMatch(/^## Last user request\nMessage 4: /);

      await appendMessages(store.db, s, 8, 6);
      const sent = fake.requests.length;
      const second = await runCompaction(w, s);

      expect(second).toMatchObject({ status: 'succeeded', firstKeptEntryId: 'm12' });
      const requests = fake.requests.slice(sent);
      expect(requests).toHaveLength(1);
      const prompt = promptOf(requests[0]!);
      expect(prompt).toContain('<previous-summary>');
      expect(prompt).toContain(JSON.stringify(firstSummary).slice(1, 80));
      // The conversation part holds only the entries since the first cut (the previous summary may quote the last request).
      const conversation = prompt.split('<conversation>')[1]!.split('</conversation>')[0]!;
      for (let i = 6; i < 12; i++) expect(conversation).toContain(`Message ${i}:`);
      for (const i of [0, 1, 2, 3, 4, 5, 12, 13])
        expect(prompt).not.toMatch(new RegExp(`\\[(?:User|Assistant)\\]: Message ${i}:`));
      expect(await countCompactionEntries(store.db, s.agentId, s.sessionId)).toBe(2);
      expect((await getSession(store.db, s.agentId, s.sessionKey))!.compaction_count).toBe(2);
    }));

  it('is idempotent: the same compaction id run twice yields one compaction entry and counts once', () =>
    suite.withWorker(db.store, {}, async (w) => {
      const { store, fake } = w;
      const s = await seedSession(store.db, 6);
      fake.respondWith(goodSummarizer);
      const compactionId = 'c0ffee00-0000-4000-8000-000000000001';
      const a = await runCompaction(w, s, { compactionId });
      const b = await runCompaction(w, s, { compactionId });

      expect(b.entryId).toBe(a.entryId);
      expect(await countCompactionEntries(store.db, s.agentId, s.sessionId)).toBe(1);
      expect((await getSession(store.db, s.agentId, s.sessionKey))!.compaction_count).toBe(1);
      expect(await getCompaction(store.db, s.agentId, compactionId)).toMatchObject({
        status: 'succeeded',
        attempts: 1,
      });

      // The record write itself: a repeated call inserts nothing and leaves the counters alone.
      const again = await writeCompactionRecord(store.db, {
        agentId: s.agentId,
        sessionKey: s.sessionKey,
        sessionId: s.sessionId,
        entryId: a.entryId!,
        summary: 'other text',
        firstKeptEntryId: a.firstKeptEntryId,
        tokensBefore: 1,
        tokensAfter: 1,
        now: new Date(),
      });
      expect(again.inserted).toBe(false);
      expect((await getSession(store.db, s.agentId, s.sessionKey))!.compaction_count).toBe(1);
    }));

  it('goes straight to the extractive summary when no model is configured', () =>
    suite.withWorker(db.store, { config: { anthropicApiKey: undefined, anthropicBaseUrl: undefined } }, async (w) => {
      const { store, fake } = w;
      const s = await seedSession(store.db, 6);
      const sent = fake.requests.length;
      const result = await runCompaction(w, s);
      expect(result).toMatchObject({ status: 'succeeded', degraded: true });
      expect(fake.requests.length).toBe(sent);
    }));

  it('appends the identifiers a summarizer keeps losing, after one retry that lists them', () =>
    suite.withWorker(db.store, {}, async (w) => {
      const { store, fake } = w;
      // Enough messages that the summary with their identifiers appended is still smaller than they are.
      const s = await seedSession(store.db, 8);
      fake.respondWith(() => fakeReply.text('A summary that forgot every path.'));
      const sent = fake.requests.length;
      expect(await runCompaction(w, s, { trigger: 'manual' })).toMatchObject({ status: 'succeeded' });
      const requests = fake.requests.slice(sent);
      expect(requests).toHaveLength(2);
      expect(promptOf(requests[1]!)).toContain('/srv/app/module-0.ts');
      const summary = (await loadActiveEntries(store.db, s.agentId, s.sessionId)).compaction!.summary;
      expect(summary).toContain(PRESERVED_IDENTIFIERS_HEADING);
      expect(summary).toContain('/srv/app/module-1.ts');
    }));

  it('fails the row, counts a session failure and throws when the deadline passes', () =>
    suite.withWorker(db.store, {}, async (w) => {
      const { store, fake } = w;
      const s = await seedSession(store.db, 4);
      fake.respondWith(() => fakeReply.text('too late', { delayMs: 3_000 }));
      const handle = await startCompaction(w, s, { timeoutMs: 800 });
      const err = await handle.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(((err as WorkflowFailedError).cause as { type?: string }).type).toBe(COMPACTION_TIMED_OUT);
      const [row] = await listCompactions(store.db, { agentId: s.agentId, limit: 5 });
      expect(row).toMatchObject({ status: 'failed' });
      expect(row!.error).toContain('timed out');
      expect((await getSession(store.db, s.agentId, s.sessionKey))!.compaction_failures).toBe(1);
      expect(await countCompactionEntries(store.db, s.agentId, s.sessionId)).toBe(0);
    }));
});
