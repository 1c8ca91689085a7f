import { testDatabases } from '../support/databases';
import { testDeps } from '../support/keel-deps';
import { prepareContext } from '../../activities/parts/prepare-context';
import { ActiveWindowCache, type ActiveWindow } from '../../src/store/active-window-cache';
import { appendEntries, type EntryToAppend } from '../../src/store/entries-repo';
import { ensureSession } from '../support/ensure-session';
import { estimateTokens } from '../../src/context/estimate-tokens';
import type { AgentMessage, CompactionEntry, TranscriptEntry } from '../../src/context/types';
import type { Store } from '../../src/store/connect';

/** A small deterministic PRNG: the generated sessions are the same on every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Writes a generated session step by step (exchanges with tool rounds, custom messages and data, compactions, a deleted entry). */
class SessionWriter {
  private n = 0;
  private last: string | null = null;
  readonly ids: string[] = [];

  constructor(
    private readonly store: Store,
    private readonly agentId: string,
    readonly sessionId: string,
    private readonly random: () => number,
  ) {}

  async step(): Promise<string> {
    const r = this.random();
    if (r < 0.08 && this.ids.length > 6) return this.compact();
    if (r < 0.12)
      return this.append(
        [{ type: 'custom', customType: 'note', data: { k: this.n } } as unknown as TranscriptEntry],
        'custom data',
      );
    if (r < 0.17)
      return this.append(
        [{ type: 'custom_message', customType: 'notice', content: `notice ${this.n}` } as unknown as TranscriptEntry],
        'custom message',
      );
    if (r < 0.2 && this.ids.length > 3) return this.deleteOne();
    return this.exchange(r < 0.5);
  }

  private async exchange(withTool: boolean): Promise<string> {
    const t = this.n;
    const messages: AgentMessage[] = [{ role: 'user', content: `question ${t}: where is order ${1000 + t}?` }];
    if (withTool) {
      messages.push({
        role: 'assistant',
        content: [{ type: 'toolCall', id: `c${t}`, name: 'lookup', arguments: { order: String(1000 + t) } }],
        stopReason: 'toolUse',
      });
      messages.push({
        role: 'toolResult',
        toolCallId: `c${t}`,
        toolName: 'lookup',
        content: [{ type: 'text', text: `order ${1000 + t}: shipped` }],
      });
    }
    messages.push({
      role: 'assistant',
      content: [{ type: 'text', text: `Order ${1000 + t} shipped.` }],
      stopReason: 'stop',
    });
    // Every third exchange arrives without stored estimates (as an import leaves them).
    return this.append(
      messages.map((message) => ({ type: 'message', message }) as unknown as TranscriptEntry),
      withTool ? 'exchange with a tool round' : 'exchange',
      t % 3 === 0,
    );
  }

  private async compact(): Promise<string> {
    const keep = this.ids[Math.floor(this.ids.length * (0.5 + this.random() / 2))]!;
    const entry = {
      type: 'compaction',
      summary: `summary at ${this.n}`,
      firstKeptEntryId: keep,
      tokensBefore: 100,
    } as unknown as TranscriptEntry;
    return this.append([entry], 'compaction');
  }

  private async deleteOne(): Promise<string> {
    const id = this.ids[this.ids.length - 2]!;
    await this.store.db
      .deleteFrom('transcript_entries')
      .where('agent_id', '=', this.agentId)
      .where('session_id', '=', this.sessionId)
      .where('id', '=', id)
      .execute();
    return 'deleted entry';
  }

  private async append(partial: TranscriptEntry[], what: string, noEstimates = false): Promise<string> {
    const rows: EntryToAppend[] = partial.map((p) => {
      const id = `e${this.n++}`;
      const entry = {
        ...p,
        id,
        parentId: this.last,
        timestamp: new Date(1_700_000_000_000 + this.n * 1000).toISOString(),
      } as TranscriptEntry;
      this.last = id;
      this.ids.push(id);
      return { entry, tokenEstimate: entry.type === 'message' && !noEstimates ? estimateTokens(entry.message) : null };
    });
    await appendEntries(this.store.db, this.agentId, this.sessionId, rows);
    return what;
  }
}

/** What a window says, without object identity. */
function plain(w: ActiveWindow) {
  return {
    compaction: (w.compaction as CompactionEntry | undefined)?.id,
    summarized: w.summarized,
    entries: w.entries.map((e) => ({ id: e.id, entry: e.entry })),
  };
}

describe.each(testDatabases())('the worker copy of active windows on $name', (database) => {
  let store: Store;
  beforeAll(async () => {
    store = await database.open();
  });
  afterAll(() => store.close());

  it('gives the same window and the same prepared context as a rebuild, on generated sessions', async () => {
    const deps = testDeps(store, 'http://127.0.0.1:9');
    const cache = new ActiveWindowCache(64 * 1024 * 1024);
    const loads = { hit: 0, miss: 0, stale: 0 };
    const pipelineRuns = { tail: 0, full: 0 };
    for (let s = 0; s < 2; s++) {
      const key = `agent:gen:s${s}`;
      const { session_id: sessionId } = await ensureSession(store.db, {
        agentId: 'gen',
        sessionKey: key,
        newSessionId: `gen-${s}`,
        now: new Date(),
      });
      const writer = new SessionWriter(store, 'gen', sessionId, prng(s + 1));
      for (let i = 0; i < 25; i++) {
        const what = await writer.step();
        const cached = await cache.load(store.db, 'gen', sessionId);
        loads[cached.load]++;
        const rebuilt = await new ActiveWindowCache(0).load(store.db, 'gen', sessionId);
        expect({ what, window: plain(cached.window) }).toEqual({ what, window: plain(rebuilt.window) });
        // The context the model would get, through the same cache, equals one prepared without it.
        const withCache = await prepareContext(deps, 'gen', key, sessionId, {
          window: deps.config.contextWindowTokens,
          windows: cache,
        });
        const without = await prepareContext(deps, 'gen', key, sessionId, { window: deps.config.contextWindowTokens });
        expect(withCache.windowLoad).toBe('hit');
        pipelineRuns[withCache.pipelineRun]++;
        expect({ what, messages: withCache.messages, tokens: withCache.estimatedTokens }).toEqual({
          what,
          messages: without.messages,
          tokens: without.estimatedTokens,
        });
      }
    }
    // Appends were applied in place; compactions, custom data and deletions rebuilt the copy.
    expect(loads.hit).toBeGreaterThan(30);
    expect(loads.stale).toBeGreaterThan(4);
    expect(loads.miss).toBe(2);
    // …and the cached windows' pipelines ran only the new messages on most turns, with the same result.
    expect(pipelineRuns.tail).toBeGreaterThan(10);
  });

  it('applies only what another writer appended, and rebuilds when a row it had read is gone', async () => {
    const { session_id: sessionId } = await ensureSession(store.db, {
      agentId: 'two',
      sessionKey: 'agent:two:main',
      newSessionId: 'two-1',
      now: new Date(),
    });
    const writer = new SessionWriter(store, 'two', sessionId, prng(99));
    for (let i = 0; i < 5; i++) await writer.step();
    const mine = new ActiveWindowCache(1024 * 1024);
    const first = await mine.load(store.db, 'two', sessionId);
    expect(first.load).toBe('miss');
    const before = first.window.entries.length;
    // "Another worker" appends an exchange: this worker's copy takes exactly those rows.
    await writer.step();
    const after = await mine.load(store.db, 'two', sessionId);
    expect(after.load).toBe('hit');
    expect(after.window.entries.length).toBeGreaterThan(before);
    expect(after.window.entries.map((e) => e.id)).toEqual(
      (await new ActiveWindowCache(0).load(store.db, 'two', sessionId)).window.entries.map((e) => e.id),
    );
    // A row of the window deleted elsewhere: the counts no longer add up, so the copy is rebuilt.
    await store.db
      .deleteFrom('transcript_entries')
      .where('agent_id', '=', 'two')
      .where('session_id', '=', sessionId)
      .where('id', '=', after.window.entries[0]!.id)
      .execute();
    const rebuilt = await mine.load(store.db, 'two', sessionId);
    expect(rebuilt.load).toBe('stale');
    expect(rebuilt.window.entries.length).toBe(after.window.entries.length - 1);
  });

  it('stays within its memory bound, evicting the least recently used session first', async () => {
    const cache = new ActiveWindowCache(0);
    const sizes: number[] = [];
    for (const s of ['a', 'b', 'c']) {
      const { session_id: sessionId } = await ensureSession(store.db, {
        agentId: 'lru',
        sessionKey: `agent:lru:${s}`,
        newSessionId: `lru-${s}`,
        now: new Date(),
      });
      const writer = new SessionWriter(store, 'lru', sessionId, prng(7));
      for (let i = 0; i < 6; i++) await writer.step();
      await cache.load(store.db, 'lru', sessionId);
      sizes.push(cache.bytes);
    }
    // With no budget nothing is kept; with room for two windows, the third load evicts the oldest.
    expect(sizes).toEqual([0, 0, 0]);
    const windowBytes = await (async () => {
      const probe = new ActiveWindowCache(1e9);
      await probe.load(store.db, 'lru', 'lru-a');
      return probe.bytes;
    })();
    const two = new ActiveWindowCache(windowBytes * 2 + 10);
    for (const s of ['a', 'b']) await two.load(store.db, 'lru', `lru-${s}`);
    await two.load(store.db, 'lru', 'lru-a'); // a is now the most recently used
    await two.load(store.db, 'lru', 'lru-c');
    expect(two.size).toBe(2);
    expect(two.bytes).toBeLessThanOrEqual(two.maxBytes);
    expect((await two.load(store.db, 'lru', 'lru-a')).load).toBe('hit');
    expect((await two.load(store.db, 'lru', 'lru-b')).load).toBe('miss');
  });
});
