import { findCutIndex, planCompaction } from '../../src/compaction/plan-compaction';
import type { AgentMessage } from '../../src/context/types';
import { assistant, call, charsOver4, entries, result, text, user } from './factories';

describe('findCutIndex', () => {
  // u100 a100 [call c1 + result 100] u10 a10
  const msgs: AgentMessage[] = [
    user(text(100)),
    assistant(text(100)),
    call(['c1']),
    result('c1', text(100)),
    user(text(10)),
    assistant(text(10)),
  ];

  it('keeps the longest tail of whole units within keepRecentTokens', () => {
    expect(findCutIndex(msgs, 60, charsOver4)).toBe(4);
  });

  it('cuts before the tool call, never at its result, when the batch fits', () => {
    expect(findCutIndex(msgs, 130, charsOver4)).toBe(2);
  });

  it('keeps nothing for a hard checkpoint (0)', () => {
    expect(findCutIndex(msgs, 0, charsOver4)).toBe(msgs.length);
  });

  it('keeps everything when all fits', () => {
    expect(findCutIndex(msgs, 10_000, charsOver4)).toBe(0);
  });

  it('never keeps a result whose call is cut, for any budget', () => {
    for (let keep = 0; keep < 400; keep += 7) {
      const cut = findCutIndex(msgs, keep, charsOver4);
      expect(msgs[cut]?.role).not.toBe('toolResult');
    }
  });
});

describe('planCompaction', () => {
  const base = Date.UTC(2026, 2, 1, 10, 0);
  const transcript = (): AgentMessage[] => {
    const msgs: AgentMessage[] = [];
    for (let i = 0; i < 20; i++) {
      msgs.push(
        user(text(50), base + i * 60_000),
        call([`c${i}`]),
        result(`c${i}`, text(200)),
        assistant(text(50), base + i * 60_000 + 30_000),
      );
    }
    return msgs;
  };

  it('summarizes everything before firstKeptEntryId in contiguous chunks, oldest first', () => {
    const es = entries(transcript());
    const plan = planCompaction(es, { contextWindow: 12_000, keepRecentTokens: 700, estimate: charsOver4 });
    const cut = es.findIndex((e) => e.id === plan.firstKeptEntryId);
    expect(cut).toBeGreaterThan(0);
    expect(plan.summarizedEntryCount).toBe(cut);
    expect(plan.chunks[0].firstEntryId).toBe('e0');
    expect(plan.chunks[plan.chunks.length - 1].lastEntryId).toBe(es[cut - 1].id);
    for (let k = 1; k < plan.chunks.length; k++) {
      const prevLast = es.findIndex((e) => e.id === plan.chunks[k - 1].lastEntryId);
      expect(plan.chunks[k].firstEntryId).toBe(es[prevLast + 1].id);
    }
    expect(plan.chunks.reduce((n, c) => n + c.entryCount, 0)).toBe(cut);
  });

  it('keeps a tail within keepRecentTokens that starts outside any tool batch', () => {
    const es = entries(transcript());
    const plan = planCompaction(es, { contextWindow: 12_000, keepRecentTokens: 700, estimate: charsOver4 });
    expect(plan.keptTokens).toBeLessThanOrEqual(700);
    const first = es.find((e) => e.id === plan.firstKeptEntryId)!;
    expect(first.message.role).not.toBe('toolResult');
  });

  it('never puts a call and its result in different chunks or on both sides of the cut', () => {
    const es = entries(transcript());
    for (const keep of [0, 100, 290, 310, 700, 1500]) {
      const plan = planCompaction(es, { contextWindow: 6_000, keepRecentTokens: keep, estimate: charsOver4 });
      const chunkOf = new Map<string, string>();
      for (const c of plan.chunks) {
        const from = es.findIndex((e) => e.id === c.firstEntryId);
        const to = es.findIndex((e) => e.id === c.lastEntryId);
        for (let i = from; i <= to; i++) chunkOf.set(es[i].id, c.firstEntryId);
      }
      es.forEach((e, i) => {
        if (e.message.role !== 'toolResult') return;
        const callEntry = es[i - 1];
        expect(chunkOf.get(e.id) ?? 'kept').toBe(chunkOf.get(callEntry.id) ?? 'kept');
      });
    }
  });

  it('chunks by window × ratio − prompt overhead (4,096, at most a tenth of the window) − previous summary', () => {
    const es = entries(transcript());
    const previousSummary = text(400);
    const plan = planCompaction(es, { contextWindow: 20_000, estimate: charsOver4, previousSummary });
    expect(plan.chunkRatio).toBe(0.4);
    expect(plan.previousSummaryTokens).toBe(400);
    expect(plan.maxChunkTokens).toBe(8_000 - 2_000 - 400);
    const large = planCompaction(es, { contextWindow: 200_000, estimate: charsOver4, previousSummary });
    expect(large.maxChunkTokens).toBe(80_000 - 4_096 - 400);
    for (const c of plan.chunks.slice(0, -1)) expect(c.tokens).toBeLessThanOrEqual(plan.maxChunkTokens);
  });

  it('is a hard checkpoint without keepRecentTokens: nothing kept, firstKeptEntryId null', () => {
    const es = entries(transcript());
    const plan = planCompaction(es, { contextWindow: 200_000, estimate: charsOver4 });
    expect(plan.firstKeptEntryId).toBeNull();
    expect(plan.summarizedEntryCount).toBe(es.length);
    expect(plan.keptTokens).toBe(0);
  });

  it('reports tokensBefore as entries plus the previous summary', () => {
    const es = entries([user(text(10)), assistant(text(20))]);
    const plan = planCompaction(es, { contextWindow: 1_000, estimate: charsOver4, previousSummary: text(5) });
    expect(plan.tokensBefore).toBe(35);
    expect(plan.summarizedTokens + plan.keptTokens + plan.previousSummaryTokens).toBe(plan.tokensBefore);
  });

  it('lists oversized entries with their note and counts notes instead of them', () => {
    const big = result('c1', text(120_000));
    const es = entries([user(text(10)), call(['c1']), big, assistant(text(10))]);
    const plan = planCompaction(es, { contextWindow: 200_000, estimate: charsOver4 });
    expect(plan.oversized).toEqual([
      { entryId: 'e2', tokens: 120_000, note: '[Large toolResult (~120K tokens) omitted from summary]' },
    ]);
    const chunk = plan.chunks.find((c) => c.firstEntryId === 'e1')!;
    expect(chunk.tokens).toBeGreaterThan(120_000);
    expect(chunk.tokensWithoutOversized).toBeLessThan(100);
  });

  it('gives each chunk the UTC time range of its messages', () => {
    const es = entries([user('a', base), assistant('b', base + 5_000), user('c', base + 60_000)]);
    const plan = planCompaction(es, { contextWindow: 200_000, estimate: charsOver4 });
    expect(plan.chunks).toHaveLength(1);
    expect(plan.chunks[0]).toMatchObject({ fromTimestamp: base, toTimestamp: base + 60_000 });
  });

  it('is small and serializable: ids and numbers, no message text', () => {
    const es = entries(transcript().map((m) => (m.role === 'user' ? user('SECRET-TEXT ' + text(50)) : m)));
    const plan = planCompaction(es, { contextWindow: 12_000, keepRecentTokens: 700, estimate: charsOver4 });
    const json = JSON.stringify(plan);
    expect(JSON.parse(json)).toEqual(plan);
    expect(json).not.toContain('SECRET-TEXT');
    expect(json.length).toBeLessThan(2_000);
  });

  it('plans nothing to summarize when everything fits in the tail', () => {
    const es = entries([user('a'), assistant('b')]);
    const plan = planCompaction(es, { contextWindow: 200_000, keepRecentTokens: 20_000, estimate: charsOver4 });
    expect(plan).toMatchObject({ firstKeptEntryId: 'e0', chunks: [], summarizedEntryCount: 0, keptEntryCount: 2 });
  });
});
