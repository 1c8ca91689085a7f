import { TurnTiming, type TurnTimingReport } from '../../workflows/turn-timing';

describe('TurnTiming', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('reports a startTurn that only began the turn as its begin step, and each model call after it', () => {
    const reports: TurnTimingReport[] = [];
    const timing = new TurnTiming({ agentId: 'a', sessionKey: 'agent:a:main' }, (r) => reports.push(r));
    timing.step('model');
    jest.advanceTimersByTime(5);
    // startTurn came back without a model call (a preflight compaction comes first).
    timing.relabel('begin');
    timing.step('compaction');
    jest.advanceTimersByTime(40);
    timing.step('model');
    jest.advanceTimersByTime(7);
    timing.finish({
      sessionId: 's',
      turn: 1,
      modelCalls: 1,
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ totalMs: 52, steps: { begin: 5, compaction: 40, model: [7] } });
  });
});
