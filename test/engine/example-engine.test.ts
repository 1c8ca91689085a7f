/**
 * The example engine (examples/retrieval-engine) in a real worker's context-engine slot: every
 * lifecycle call at its moment, in order, and what it recalls reaches the model.
 */
import { testDatabases } from '../support/databases';
import { fakeReply } from '../../src/testing';
import { integrationSuite } from '../support/integration';
import { registerContextEngine } from '../../src/engine/registry';
import { EngineSlots } from '../../src/engine/engine-slots';
import { KeelMetrics } from '../../src/observability/metrics';
import type { AgentMessage } from '../../src/context/types';
import type { AssembleParams, CompactParams, IngestParams, SessionRef } from '../../src/engine/types';
import { RECALLED_HEADING, RetrievalContextEngine } from '../../examples/retrieval-engine/src/retrieval-engine';
import { isFlushRequest, isSummarizerRequest, realisticMessage } from '../support/durable-turn-helpers';
import { goodSummarizer, runCompaction, seedSession } from '../compaction-workflow/support';
import { ensureSession } from '../support/ensure-session';
import { appendEntries, loadActiveEntries } from '../../src/store/entries-repo';

const suite = integrationSuite();

function freshAgent(): string {
  return `x${Math.random().toString(36).slice(2, 10)}`;
}

function textOf(m: AgentMessage): string {
  return typeof m.content === 'string' ? m.content : m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** The example engine, recording each lifecycle call with what it was handed. */
class RecordedRetrievalEngine extends RetrievalContextEngine {
  constructor(readonly calls: string[]) {
    super();
  }
  override async bootstrap(p: SessionRef & { messages: readonly AgentMessage[] }) {
    this.calls.push(`bootstrap ${p.messages.map((m) => m.role).join(',')}`);
    return super.bootstrap(p);
  }
  override async ingest(p: IngestParams) {
    this.calls.push(`ingest ${p.message.role}`);
    return super.ingest(p);
  }
  override async ingestBatch(p: SessionRef & { messages: readonly AgentMessage[] }) {
    this.calls.push(`ingestBatch ${p.messages.map((m) => m.role).join(',')}`);
    return super.ingestBatch(p);
  }
  override async assemble(p: AssembleParams) {
    this.calls.push('assemble');
    return super.assemble(p);
  }
  async afterTurn(_p: SessionRef & { messages: readonly AgentMessage[] }) {
    this.calls.push('afterTurn');
  }
  override async compact(p: CompactParams) {
    this.calls.push(`compact ${p.trigger}`);
    return super.compact(p);
  }
  override async dispose(p: SessionRef) {
    this.calls.push('dispose');
    return super.dispose(p);
  }
}

describe.each(testDatabases())('the example retrieval engine in the slot of a worker on $name', (database) => {
  const db = suite.storePerTest(database);

  it('is built once, called at every lifecycle moment in order, and recalls what a compaction summarized', async () => {
    const calls: string[] = [];
    let built = 0;
    const unregister = registerContextEngine('retrieval', () => (built++, new RecordedRetrievalEngine(calls)));
    const contextEngines = new EngineSlots();
    try {
      await suite.withWorker(
        db.store,
        { config: { contextEngine: 'retrieval' }, deps: { contextEngines } },
        async ({ client, fake }) => {
          const key = `agent:${freshAgent()}:main`;
          fake.enqueue(fakeReply.text('Noted.'));
          await client.sendMessage(key, realisticMessage('The keel of the Heron is made of Burmese teak.'));
          fake.enqueue(fakeReply.text('Blue.'));
          await client.sendMessage(key, realisticMessage('Which paint suits the hull?'));
          fake.respondWith((request) =>
            isSummarizerRequest(request)
              ? goodSummarizer(request)
              : isFlushRequest(request)
                ? fakeReply.text('NO_REPLY')
                : undefined,
          );
          expect((await client.compact(key, { keepRecentTokens: 0 })).status).toBe('succeeded');
          fake.respondWith(undefined);
          fake.enqueue(fakeReply.text('Teak.'));
          const before = fake.requests.length;
          await client.sendMessage(key, 'Which wood is the Heron keel made of?');
          const turn = fake.requests[before]!;
          // The model's context lost the first message to the summary; the engine recalled it.
          expect(JSON.stringify(turn.body.messages)).not.toContain('Burmese teak');
          expect(JSON.stringify(turn.body.system)).toContain(RECALLED_HEADING);
          expect(JSON.stringify(turn.body.system)).toContain('- The keel of the Heron is made of Burmese teak.');
        },
      );
      await contextEngines.close();
      expect(built).toBe(1);
      // The memory flush before the compaction, and the summary on the prompt cache (which rebuilds
      // the last turn's request), prepare a context as a turn does: each assembles.
      expect(calls).toEqual([
        'bootstrap user',
        'assemble',
        'afterTurn',
        'ingestBatch assistant',
        'ingestBatch user',
        'assemble',
        'afterTurn',
        'ingestBatch assistant',
        'assemble',
        'compact manual',
        'assemble',
        'ingestBatch user',
        'assemble',
        'afterTurn',
        'ingestBatch assistant',
        'dispose',
      ]);
    } finally {
      unregister();
    }
  });

  it('bootstraps a session whose history was written without it (an import) with that history', async () => {
    const calls: string[] = [];
    const unregister = registerContextEngine('retrieval', () => new RecordedRetrievalEngine(calls));
    try {
      await suite.withWorker(db.store, { config: { contextEngine: 'retrieval' } }, async ({ client, store, fake }) => {
        const agent = freshAgent();
        const key = `agent:${agent}:main`;
        const session = await ensureSession(store.db, {
          agentId: agent,
          sessionKey: key,
          newSessionId: `s-${agent}`,
          now: new Date(),
        });
        const at = new Date().toISOString();
        const imported: AgentMessage[] = [
          { role: 'user', content: 'Our harbour code is HX-4471.' },
          { role: 'assistant', content: [{ type: 'text', text: 'Noted.' }], stopReason: 'stop' },
        ];
        await appendEntries(
          store.db,
          agent,
          session.session_id,
          imported.map((message, i) => ({
            entry: { type: 'message', id: `i${i}`, parentId: i ? `i${i - 1}` : null, timestamp: at, message },
            tokenEstimate: 10,
          })),
        );
        fake.enqueue(fakeReply.text('ok'));
        await client.sendMessage(key, 'Hello again.');
        expect(calls.slice(0, 2)).toEqual(['bootstrap user,assistant,user', 'assemble']);
      });
    } finally {
      unregister();
    }
  });

  it('leaves the compaction to an engine that compacts itself: Keel summarizes nothing and writes nothing', async () => {
    const asked: CompactParams[] = [];
    const unregister = registerContextEngine('self-compacting', () => ({
      id: 'self-compacting',
      ingest: async () => {},
      assemble: async ({ messages }) => ({ messages, estimatedTokens: 1 }),
      compact: async (p) => (asked.push(p), { delegated: false, compacted: true, tokensAfter: 10 }),
    }));
    try {
      await suite.withWorker(db.store, { config: { contextEngine: 'self-compacting' } }, async (w) => {
        const s = await seedSession(w.store.db, 8);
        const before = w.fake.requests.length;
        const result = await runCompaction(w, s, { trigger: 'manual', keepRecentTokens: 0 });
        expect(result).toMatchObject({ status: 'skipped', entryId: null });
        expect(w.fake.requests.length).toBe(before);
        expect(asked.map((p) => [p.sessionId, p.trigger, p.messages.length])).toEqual([[s.sessionId, 'manual', 8]]);
        expect((await loadActiveEntries(w.store.db, s.agentId, s.sessionId)).compaction).toBeUndefined();
      });
    } finally {
      unregister();
    }
  });

  it('answers with the legacy engine when the engine throws, and counts the fallback', async () => {
    const unregister = registerContextEngine('broken', () => ({
      id: 'broken',
      ingest: async () => {},
      compact: async () => ({ delegated: true }),
      assemble: async () => {
        throw new Error('the index is offline');
      },
    }));
    const metrics = new KeelMetrics();
    try {
      await suite.withWorker(
        db.store,
        { config: { contextEngine: 'broken' }, deps: { metrics } },
        async ({ client, fake }) => {
          fake.enqueue(fakeReply.text('Still here.'));
          const result = await client.sendMessage(`agent:${freshAgent()}:main`, 'Are you there?');
          expect(result.reply).toBe('Still here.');
          const sent = fake.requests.at(-1)!.body.messages!.map((m) => textOf(m as unknown as AgentMessage));
          expect(sent).toEqual(['Are you there?']);
        },
      );
      const counted = await metrics.registry.getSingleMetricAsString('keel_context_engine_failures_total');
      expect(counted).toContain(
        'keel_context_engine_failures_total{engine="broken",method="assemble",fallback="true"} 1',
      );
    } finally {
      unregister();
    }
  });
});
