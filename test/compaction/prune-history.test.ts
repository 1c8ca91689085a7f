import { pruneHistoryForContextShare } from '../../src/compaction/prune-history';
import type { AgentMessage } from '../../src/context/types';
import { assistant, call, charsOver4, result, text, user } from './factories';

const sum = (ms: AgentMessage[]) => ms.reduce((n, m) => n + charsOver4(m), 0);

describe('pruneHistoryForContextShare', () => {
  it('returns the same array and an empty report when history is within its share', () => {
    const msgs = [user(text(10)), assistant(text(10))];
    const r = pruneHistoryForContextShare(msgs, { contextWindow: 100, estimate: charsOver4 });
    expect(r.messages).toBe(msgs);
    expect(r).toMatchObject({
      droppedChunks: 0,
      droppedMessages: 0,
      droppedTokens: 0,
      keptTokens: 20,
      budgetTokens: 50,
    });
    expect(r.droppedMessagesList).toEqual([]);
  });

  it('drops the oldest half once when that is enough', () => {
    const msgs = Array.from({ length: 8 }, () => user(text(10)));
    const r = pruneHistoryForContextShare(msgs, {
      contextWindow: 100,
      maxHistoryShare: 0.5,
      parts: 2,
      estimate: charsOver4,
    });
    expect(r).toMatchObject({
      droppedChunks: 1,
      droppedMessages: 4,
      droppedTokens: 40,
      keptTokens: 40,
      budgetTokens: 50,
    });
    expect(r.messages).toEqual(msgs.slice(4));
    expect(r.droppedMessagesList).toEqual(msgs.slice(0, 4));
  });

  it('keeps dropping oldest chunks until within budget', () => {
    const msgs = Array.from({ length: 16 }, () => user(text(10)));
    const r = pruneHistoryForContextShare(msgs, { contextWindow: 100, estimate: charsOver4 });
    expect(r).toMatchObject({ droppedChunks: 2, droppedMessages: 12, droppedTokens: 120, keptTokens: 40 });
    expect(r.messages).toEqual(msgs.slice(12));
  });

  it('stops when the split yields a single chunk, even over budget', () => {
    const msgs = [user(text(100)), user(text(100)), user(text(100))];
    const r = pruneHistoryForContextShare(msgs, { contextWindow: 100, estimate: charsOver4 });
    expect(r.messages).toBe(msgs);
    expect(r.droppedChunks).toBe(0);
    expect(r.keptTokens).toBe(300);
  });

  it('drops results orphaned by a dropped call and counts them', () => {
    // The result of c1 arrives after another assistant message: outside c1's batch, so the split may separate them.
    const msgs: AgentMessage[] = [
      user(text(20)),
      call(['c1']),
      assistant(text(20)),
      result('c1', text(2)),
      user(text(10)),
      user(text(10)),
    ];
    const r = pruneHistoryForContextShare(msgs, { contextWindow: 80, estimate: charsOver4 });
    const dropped = r.droppedMessagesList;
    expect(dropped).toContain(msgs[3]);
    expect(r.messages.some((m) => m.role === 'toolResult')).toBe(false);
    expect(r.droppedMessages).toBe(dropped.length);
    expect(r.droppedTokens).toBe(sum(dropped));
    expect(r.keptTokens).toBe(sum(r.messages));
  });

  it('never leaves a result without its call', () => {
    const msgs: AgentMessage[] = [];
    for (let i = 0; i < 40; i++)
      msgs.push(user(text(5)), call([`c${i}`]), result(`c${i}`, text(20)), assistant(text(5)));
    const r = pruneHistoryForContextShare(msgs, { contextWindow: 300, estimate: charsOver4 });
    expect(r.keptTokens).toBeLessThanOrEqual(150);
    const callIds = new Set(
      r.messages.flatMap((m) => (m.role === 'assistant' ? m.content.map((b) => ('id' in b ? b.id : '')) : [])),
    );
    for (const m of r.messages) if (m.role === 'toolResult') expect(callIds.has(m.toolCallId)).toBe(true);
  });
});
