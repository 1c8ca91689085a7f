import { retryLine } from '../../src/cli/chat-watch';

describe('retryLine', () => {
  const now = new Date('2026-12-07T10:00:00Z');
  const failure = 'model unreachable at http://127.0.0.1:9 (ANTHROPIC_BASE_URL): fetch failed';

  it('names the attempt, when the next one starts and what is left of the retry budget', () => {
    const line = retryLine(
      {
        activityType: 'callModel',
        attempt: 3,
        lastFailure: `${failure}\n    at stack line`,
        nextAttemptAt: new Date(now.getTime() + 3_200),
        budgetEndsAt: new Date(now.getTime() + 290_000),
      },
      now,
    );
    expect(line).toBe(
      `${failure}; attempt 3, next try in 4 s, 4 min 50 s of the retry budget left; retrying — Ctrl-C to cancel`,
    );
  });

  it('says an attempt runs now, and counts attempts against their limit when the step has one', () => {
    const line = retryLine({ activityType: 'finishTurn', attempt: 2, lastFailure: failure, maximumAttempts: 3 }, now);
    expect(line).toBe(`${failure}; attempt 2 of 3, trying now; retrying — Ctrl-C to cancel`);
  });

  it('never shows a negative wait when the next attempt is due', () => {
    const line = retryLine(
      { activityType: 'callModel', attempt: 4, lastFailure: failure, nextAttemptAt: new Date(now.getTime() - 500) },
      now,
    );
    expect(line).toContain('attempt 4, next try in 0 s;');
  });
});
