import type { AgentMessage } from '../../src/context/types';
import { ContextEngineSlot, type EngineMethod, type StoredMessage } from '../../src/engine/engine-slot';
import { EngineSlots } from '../../src/engine/engine-slots';
import { registerContextEngine } from '../../src/engine/registry';
import type { ContextEngine } from '../../src/engine/types';
import { assistant, user } from '../context/factories';

/** An engine that records each lifecycle call as `method:detail`. */
function recordingEngine(calls: string[], overrides: Partial<ContextEngine> = {}): ContextEngine {
  const text = (m: AgentMessage) => (typeof m.content === 'string' ? m.content : m.role);
  return {
    id: 'recording',
    bootstrap: async ({ sessionId, messages }) => void calls.push(`bootstrap:${sessionId}:${messages.map(text)}`),
    ingest: async ({ message, entryId }) => void calls.push(`ingest:${entryId}:${text(message)}`),
    assemble: async ({ messages }) => (calls.push('assemble'), { messages, estimatedTokens: 1 }),
    compact: async () => (calls.push('compact'), { delegated: true }),
    dispose: async ({ sessionId }) => void calls.push(`dispose:${sessionId}`),
    ...overrides,
  };
}

function stored(seq: number, message: AgentMessage): StoredMessage {
  return { entryId: `e${seq}`, seq, message };
}

const s1 = { sessionId: 's1', sessionKey: 'agent:a:one' };

function slotOf(engine: ContextEngine, maxSessions = 10) {
  const failures: Array<{ method: EngineMethod; fallback: boolean; message: string }> = [];
  const evictions: string[] = [];
  const slot = new ContextEngineSlot(
    engine,
    {
      failed: (_id, method, err, f) => void failures.push({ method, fallback: f.fallback, message: String(err) }),
      evicted: (_id, sessionId, max) => void evictions.push(`${sessionId}/${max}`),
    },
    maxSessions,
  );
  return { slot, failures, evictions };
}

describe('ContextEngineSlot', () => {
  it('bootstraps a session once with its window, then ingests each later message once, in seq order', async () => {
    const calls: string[] = [];
    const { slot } = slotOf(recordingEngine(calls));
    const window = [stored(1, user('hi')), stored(2, assistant('hello'))];
    await slot.sync(s1, window);
    await slot.sync(s1, window);
    await slot.sync(s1, [...window, stored(3, user('again')), stored(4, user('more'))]);
    await slot.sync(s1, [...window, stored(3, user('again')), stored(4, user('more'))]);
    expect(calls).toEqual(['bootstrap:s1:hi,assistant', 'ingest:e3:again', 'ingest:e4:more']);
  });

  it('hands the new messages to ingestBatch as one call when the engine has it', async () => {
    const batches: string[][] = [];
    const { slot } = slotOf(
      recordingEngine([], {
        ingestBatch: async ({ messages }) => void batches.push(messages.map((m) => String(m.content))),
      }),
    );
    await slot.sync(s1, [stored(1, user('a'))]);
    await slot.sync(s1, [stored(1, user('a')), stored(2, user('b')), stored(3, user('c'))]);
    expect(batches).toEqual([['b', 'c']]);
  });

  it('ingests stored messages after a reply without waiting, and the next sync waits for that ingest', async () => {
    const calls: string[] = [];
    const { slot } = slotOf(recordingEngine(calls));
    await slot.sync(s1, [stored(1, user('q'))]);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const from: number[] = [];
    slot.ingestLater(s1, async (fromSeq) => {
      from.push(fromSeq);
      await gate;
      return [stored(2, assistant('answer')), stored(3, user('late'))];
    });
    expect(calls).toEqual(['bootstrap:s1:q']);
    const next = slot.sync(s1, [stored(1, user('q')), stored(2, assistant('answer')), stored(3, user('late'))]);
    release();
    await next;
    expect(from).toEqual([2]);
    // The sync found both already ingested: each message reached the engine once.
    expect(calls).toEqual(['bootstrap:s1:q', 'ingest:e2:assistant', 'ingest:e3:late']);
  });

  it('answers with the legacy engine when assemble throws, and reports the fallback', async () => {
    const { slot, failures } = slotOf(
      recordingEngine([], {
        assemble: async () => {
          throw new Error('index offline');
        },
      }),
    );
    const messages = [user('hi')];
    const out = await slot.assemble({ ...s1, messages, tokenBudget: 1_000 });
    expect(out.messages).toBe(messages);
    expect(out.estimatedTokens).toBeGreaterThan(0);
    expect(failures).toEqual([{ method: 'assemble', fallback: true, message: 'Error: index offline' }]);
  });

  it("delegates to Keel's compaction when compact throws, and a failing ingest never fails the caller", async () => {
    const { slot, failures } = slotOf(
      recordingEngine([], {
        compact: async () => {
          throw new Error('no summary');
        },
        ingest: async () => {
          throw new Error('disk full');
        },
      }),
    );
    expect(await slot.compact({ ...s1, messages: [] })).toEqual({ delegated: true });
    await slot.sync(s1, [stored(1, user('a'))]);
    await slot.sync(s1, [stored(1, user('a')), stored(2, user('b'))]);
    expect(failures.map((f) => [f.method, f.fallback])).toEqual([
      ['compact', true],
      ['ingest', false],
    ]);
  });

  it('re-throws a cancellation instead of falling back', async () => {
    const cancelled = Object.assign(new Error('cancelled'), { name: 'CancelledFailure' });
    const { slot, failures } = slotOf(
      recordingEngine([], {
        assemble: async () => {
          throw cancelled;
        },
      }),
    );
    await expect(slot.assemble({ ...s1, messages: [], tokenBudget: 10 })).rejects.toBe(cancelled);
    expect(failures).toEqual([]);
  });

  it('disposes the least recently used session past its limit, and every session on close', async () => {
    const calls: string[] = [];
    const { slot, evictions } = slotOf(recordingEngine(calls), 2);
    await slot.sync({ sessionId: 'a' }, []);
    await slot.sync({ sessionId: 'b' }, []);
    await slot.sync({ sessionId: 'a' }, []);
    await slot.sync({ sessionId: 'c' }, []);
    expect(calls.filter((c) => c.startsWith('dispose'))).toEqual(['dispose:b']);
    // The limit is said, with its figure, each time it disposes a session.
    expect(evictions).toEqual(['b/2']);
    await slot.close();
    expect(calls.filter((c) => c.startsWith('dispose'))).toEqual(['dispose:b', 'dispose:a', 'dispose:c']);
    expect(slot.size).toBe(0);
  });
});

describe('EngineSlots', () => {
  it("builds one engine per agent config for the worker's lifetime", async () => {
    let built = 0;
    const unregister = registerContextEngine('counted', () => (built++, recordingEngine([])));
    try {
      const engines = new EngineSlots();
      const config = { contextEngine: 'counted' };
      expect(engines.for(config)).toBe(engines.for(config));
      engines.for({ contextEngine: 'counted' });
      expect(built).toBe(2);
    } finally {
      unregister();
    }
  });
});
