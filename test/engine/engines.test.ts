import { estimateMessagesTokens } from '../../src/context/estimate-tokens';
import type { AgentMessage, ToolResultMessage } from '../../src/context/types';
import { BudgetedContextEngine, clearedNote } from '../../src/engine/budgeted';
import { LegacyContextEngine } from '../../src/engine/legacy';
import {
  registerContextEngine,
  registeredContextEngines,
  resolveContextEngine,
  UnknownContextEngineError,
} from '../../src/engine/registry';
import type { ContextEngine } from '../../src/engine/types';
import { assistant, call, result, user } from '../context/factories';

const big = (n: number) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27)).slice(0, n);

/** A session of `turns` exchanges, each reading one large file. */
function toolHeavySession(turns: number, chars: number): AgentMessage[] {
  const out: AgentMessage[] = [];
  for (let t = 0; t < turns; t += 1) {
    out.push(
      user(`read file ${t}`),
      assistant(call(`c${t}`, 'read')),
      result(`c${t}`, big(chars)),
      assistant(`file ${t} read`),
    );
  }
  return out;
}

const session = { sessionId: 's1' };

describe('LegacyContextEngine', () => {
  it('passes messages through unchanged with their estimate and delegates compaction', async () => {
    const engine = new LegacyContextEngine();
    const messages = toolHeavySession(2, 1_000);
    const assembled = await engine.assemble({ ...session, messages, tokenBudget: 10 });
    expect(assembled.messages).toBe(messages);
    expect(assembled.estimatedTokens).toBe(estimateMessagesTokens(messages));
    expect(await engine.compact({ ...session, messages })).toEqual({ delegated: true });
  });
});

describe('BudgetedContextEngine', () => {
  it('keeps a session under budget where legacy overflows', async () => {
    const messages = toolHeavySession(8, 60_000);
    const budget = 40_000;
    const legacy = await new LegacyContextEngine().assemble({ ...session, messages, tokenBudget: budget });
    const budgeted = await new BudgetedContextEngine().assemble({ ...session, messages, tokenBudget: budget });
    expect(legacy.estimatedTokens).toBeGreaterThan(budget);
    expect(budgeted.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(estimateMessagesTokens(budgeted.messages)).toBe(budgeted.estimatedTokens);
    expect(budgeted.report?.overBudget).toBe(false);
  });

  it('clears oldest first, only as much as needed, and reports what it cleared', async () => {
    const messages = toolHeavySession(6, 60_000);
    const perResult = estimateMessagesTokens([messages[2]]);
    const total = estimateMessagesTokens(messages);
    // Needs exactly two results cleared.
    const budget = total - perResult - Math.floor(perResult / 2);
    const out = await new BudgetedContextEngine().assemble({ ...session, messages, tokenBudget: budget });
    expect(out.report?.cleared.map((c) => c.toolCallId)).toEqual(['c0', 'c1']);
    expect(out.report?.cleared[0]).toEqual({
      index: 2,
      toolCallId: 'c0',
      toolName: 'read',
      chars: 60_000,
      reason: 'budget',
    });
    expect((out.messages[2] as ToolResultMessage).content).toEqual([
      { type: 'text', text: clearedNote(60_000, 'read') },
    ]);
    expect(out.messages[10]).toBe(messages[10]); // c2 untouched
  });

  it('never clears within the last keepLastAssistants exchanges', async () => {
    const messages = toolHeavySession(4, 60_000);
    const out = await new BudgetedContextEngine({ keepLastAssistants: 3 }).assemble({
      ...session,
      messages,
      tokenBudget: 1_000,
    });
    // The 3rd-last assistant is c2's final answer at index 11; results at 2, 6, 10 are older.
    expect(out.report?.cleared.map((c) => c.toolCallId)).toEqual(['c0', 'c1', 'c2']);
    expect(out.messages[14]).toBe(messages[14]);
    expect(out.report?.overBudget).toBe(true);
  });

  it('leaves results at or below minPrunableToolChars alone', async () => {
    const messages = toolHeavySession(5, 10_000);
    const out = await new BudgetedContextEngine({ minPrunableToolChars: 10_000, keepLastAssistants: 1 }).assemble({
      ...session,
      messages,
      tokenBudget: 100,
    });
    expect(out.report?.cleared).toEqual([]);
    expect(out.messages).toBe(messages);
  });

  it('returns the same array when already under budget', async () => {
    const messages = toolHeavySession(2, 100);
    const out = await new BudgetedContextEngine().assemble({ ...session, messages, tokenBudget: 1_000_000 });
    expect(out.messages).toBe(messages);
    expect(out.report).toEqual({ cleared: [], overBudget: false });
  });

  it('does not mutate the stored messages (clearing is not persisted)', async () => {
    const messages = toolHeavySession(5, 60_000);
    const copy = JSON.stringify(messages);
    await new BudgetedContextEngine().assemble({ ...session, messages, tokenBudget: 1_000 });
    expect(JSON.stringify(messages)).toBe(copy);
  });
});

describe('BudgetedContextEngine pruning TTL (clear old tool output after the session was idle)', () => {
  const minute = 60_000;
  /** Turns of a tool-heavy session, each a minute apart; `idleBeforeLast` ms pass before the last user message. */
  function timed(turns: number, chars: number, idleBeforeLast: number): AgentMessage[] {
    const messages = toolHeavySession(turns, chars);
    let at = Date.UTC(2026, 10, 25, 9, 0);
    return messages.map((m, i) => {
      at += i === messages.length - 4 ? idleBeforeLast : 1_000;
      return { ...m, timestamp: at };
    });
  }
  const engine = new BudgetedContextEngine({
    pruningTtl: 2 * minute,
    keepLastAssistants: 1,
    minPrunableToolChars: 10_000,
  });
  const big = 1_000_000;

  it('under budget, an idle gap longer than the TTL clears every old large result outside the protected exchange', async () => {
    const messages = timed(4, 20_000, 3 * minute);
    const out = await engine.assemble({ ...session, messages, tokenBudget: big });
    // The last turn (c3) is protected by keepLastAssistants 1: its own call and result are after the gap anyway.
    expect(out.report?.cleared.map((c) => [c.toolCallId, c.reason])).toEqual([
      ['c0', 'idle'],
      ['c1', 'idle'],
      ['c2', 'idle'],
    ]);
    expect((out.messages[2] as ToolResultMessage).content).toEqual([
      { type: 'text', text: clearedNote(20_000, 'read') },
    ]);
    expect(out.messages[14]).toBe(messages[14]);
    expect(out.estimatedTokens).toBe(estimateMessagesTokens(out.messages));
  });

  it('a gap shorter than the TTL clears nothing under budget', async () => {
    const messages = timed(4, 20_000, 1 * minute);
    const out = await engine.assemble({ ...session, messages, tokenBudget: big });
    expect(out.messages).toBe(messages);
    expect(out.report?.cleared).toEqual([]);
  });

  it('keeps results at or below minPrunableToolChars and those within keepLastAssistants, and stays cleared in later turns', async () => {
    const small = timed(4, 5_000, 10 * minute);
    expect((await engine.assemble({ ...session, messages: small, tokenBudget: big })).report?.cleared).toEqual([]);
    const messages = timed(4, 20_000, 10 * minute);
    const protective = await new BudgetedContextEngine({
      pruningTtl: 2 * minute,
      keepLastAssistants: 4,
      minPrunableToolChars: 10_000,
    }).assemble({ ...session, messages, tokenBudget: big });
    // The 4th-last assistant is c2's call (index 9): its result is protected, c0's and c1's are older.
    expect(protective.report?.cleared.map((c) => c.toolCallId)).toEqual(['c0', 'c1']);
    // A quick later turn: the old gap is still in the transcript, so the same results stay cleared (a stable prefix).
    const later = [
      ...messages,
      { ...user('next'), timestamp: messages.at(-1)!.timestamp! + 5_000 },
      { ...assistant('ok'), timestamp: messages.at(-1)!.timestamp! + 6_000 },
    ];
    const again = await engine.assemble({ ...session, messages: later, tokenBudget: big });
    expect(again.report?.cleared.map((c) => c.toolCallId)).toEqual(['c0', 'c1', 'c2']);
  });

  it('without a TTL only the budget clears (messages without timestamps never count as idle)', async () => {
    const messages = timed(4, 20_000, 60 * minute);
    expect(
      (
        await new BudgetedContextEngine({ minPrunableToolChars: 10_000 }).assemble({
          ...session,
          messages,
          tokenBudget: big,
        })
      ).messages,
    ).toBe(messages);
    const untimed = toolHeavySession(4, 20_000);
    expect((await engine.assemble({ ...session, messages: untimed, tokenBudget: big })).messages).toBe(untimed);
  });
});

describe('context engine registry', () => {
  it('resolves legacy by default', () => {
    expect(resolveContextEngine().id).toBe('legacy');
    expect(resolveContextEngine({ plugins: { slots: {} } }).id).toBe('legacy');
  });

  it('resolves the engine the config slot selects, passing its options', async () => {
    const engine = resolveContextEngine({
      plugins: { slots: { contextEngine: 'budgeted' } },
      contextEngine: { minPrunableToolChars: 10 },
    });
    expect(engine.id).toBe('budgeted');
    const messages = toolHeavySession(4, 50);
    const out = await engine.assemble({ ...session, messages, tokenBudget: 1 });
    expect(out.report?.cleared.length).toBeGreaterThan(0);
  });

  it('registers a custom engine and removes it again', () => {
    const custom: ContextEngine = {
      id: 'rag',
      ingest: async () => undefined,
      assemble: async ({ messages }) => ({ messages, estimatedTokens: 0, systemPromptAddition: 'recalled' }),
      compact: async () => ({ delegated: true }),
    };
    const unregister = registerContextEngine('rag', () => custom);
    expect(resolveContextEngine({ plugins: { slots: { contextEngine: 'rag' } } })).toBe(custom);
    unregister();
    expect(registeredContextEngines()).not.toContain('rag');
  });

  it('throws a typed error naming the unknown id and the registered ones', () => {
    expect(() => resolveContextEngine({ plugins: { slots: { contextEngine: 'nope' } } })).toThrow(
      UnknownContextEngineError,
    );
    try {
      resolveContextEngine({ plugins: { slots: { contextEngine: 'nope' } } });
    } catch (error) {
      expect(error).toMatchObject({ engineId: 'nope', registered: expect.arrayContaining(['legacy', 'budgeted']) });
    }
  });
});
