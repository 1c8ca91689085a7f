import { budgetReportRequest, describeStopReason, resolveRunBudget, runBudgetProblem } from '../../src/turn/run-budget';
import { TurnProgress } from '../../workflows/turn-progress';
import {
  TASK_IN_PROGRESS_HEADING,
  withTaskInProgress,
  withoutTaskInProgress,
} from '../../src/compaction/task-in-progress';

const usage = (tokens: number) => ({ inputTokens: tokens, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

describe('resolveRunBudget', () => {
  const agent = { maxModelCallsPerTurn: 1_000, maxTurnTokens: 50_000_000 };
  it.each([
    [undefined, { maxModelCalls: 1_000, maxTokens: 50_000_000 }],
    [{ maxModelCalls: 8 }, { maxModelCalls: 8, maxTokens: 50_000_000 }],
    [{ maxModelCalls: null }, { maxModelCalls: null, maxTokens: 50_000_000 }],
    [{ maxTokens: null }, { maxModelCalls: 1_000, maxTokens: null }],
  ])('takes the request %j over the agent', (request, expected) => {
    expect(resolveRunBudget(agent, request)).toEqual(expected);
  });
  it('keeps a step limit when nothing else would bound the run', () => {
    expect(resolveRunBudget({ maxModelCallsPerTurn: 40, maxTurnTokens: null }, { maxModelCalls: null })).toEqual({
      maxModelCalls: 40,
      maxTokens: null,
    });
  });
});

describe('runBudgetProblem', () => {
  it.each([
    [{ maxModelCalls: 1 }, 'budget.maxModelCalls'],
    [{ maxModelCalls: 2.5 }, 'budget.maxModelCalls'],
    [{ maxTokens: 0 }, 'budget.maxTokens'],
    [{ maxModelCalls: null, maxTokens: null }, 'budget'],
  ])('refuses %j naming %s', (budget, field) => {
    expect(runBudgetProblem(budget)?.field).toBe(field);
  });
  it('admits a step limit off with a token limit', () => {
    expect(runBudgetProblem({ maxModelCalls: null, maxTokens: 1_000 })).toBeUndefined();
  });
});

describe('TurnProgress budget', () => {
  it('keeps the last call of a step limit for the report', () => {
    const turn = new TurnProgress(1, 'u', true, undefined);
    turn.budget = { maxModelCalls: 3, maxTokens: null };
    turn.replied({ entryId: 'a1', text: '', usage: usage(10) });
    expect(turn.budgetReached()).toBeUndefined();
    turn.replied({ entryId: 'a2', text: '', usage: usage(10) });
    expect(turn.budgetReached()).toBe('modelCalls');
  });
  it('stops at a token limit once the calls so far reach it, and its result carries the reason', () => {
    const turn = new TurnProgress(1, 'u', true, undefined);
    turn.budget = { maxModelCalls: null, maxTokens: 100 };
    turn.replied({ entryId: 'a1', text: '', usage: usage(60) });
    expect(turn.budgetReached()).toBeUndefined();
    turn.replied({ entryId: 'a2', text: '', usage: usage(60) });
    expect(turn.budgetReached()).toBe('tokens');
    turn.stopAt('tokens');
    turn.replied({ entryId: 'a3', text: 'report', usage: usage(5) });
    expect(turn.result({ entryId: 'a3', text: 'report', usage: usage(5) }, 1).stopReason).toEqual({
      kind: 'budget',
      limit: 'tokens',
      modelCalls: 3,
      maxModelCalls: null,
      tokens: 125,
      maxTokens: 100,
    });
  });
  it('lists the most recent tool calls and counts the rest, across a hand-on', () => {
    const turn = new TurnProgress(1, 'u', true, undefined);
    for (let i = 0; i < 70; i++) turn.toolAnswered({ id: `t${i}`, name: 'x' }, { entryId: `r${i}`, isError: false });
    const resumed = TurnProgress.resumed(turn.snapshot());
    const result = resumed.result({ entryId: 'a', text: 'done', usage: usage(1) }, 1);
    expect(result.toolCalls).toHaveLength(50);
    expect(result.toolCalls![0]!.id).toBe('t20');
    expect(result.toolCallsOmitted).toBe(20);
    expect(resumed.running().toolCalls).toBe(70);
  });
});

describe('stop reason words', () => {
  const stop = {
    kind: 'budget',
    limit: 'modelCalls',
    modelCalls: 7,
    maxModelCalls: 8,
    tokens: 900,
    maxTokens: null,
  } as const;
  it('asks the last call to report, naming the limit', () => {
    expect(budgetReportRequest(stop)).toContain('its step limit (8 of 8 model calls, this one included)');
  });
  it('says what continues the run and which setting raises the limit', () => {
    expect(describeStopReason(stop)).toMatch(/send "continue".*KEEL_MAX_MODEL_CALLS/);
  });
});

describe('the task in progress section', () => {
  it('is replaced, never repeated, across stacked compactions', () => {
    const once = withTaskInProgress('Summary one.', 'Read all 300 parts.');
    const twice = withTaskInProgress(`${once}\n\nMore summary.`, 'Read all 300 parts.');
    expect(twice.split(TASK_IN_PROGRESS_HEADING)).toHaveLength(2);
    expect(twice).toContain('More summary.');
    expect(twice).toContain('<task>\nRead all 300 parts.\n</task>');
    expect(withoutTaskInProgress(twice)).toBe('Summary one.\n\nMore summary.');
  });
  it('keeps a long task to its bound and a closing tag in it cannot end the section', () => {
    const section = withTaskInProgress('S.', `${'x'.repeat(9_000)}</task>`);
    expect(section).toMatch(/more characters in the stored message\)\n<\/task>$/);
  });
});
