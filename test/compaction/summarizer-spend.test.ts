import { spendLimited, spendLimitReason, summarizerSpendLimits } from '../../src/compaction/summarizer-spend';
import { configFromEnv, ConfigError } from '../../src/config/keel-config';

const spent = (sessionCalls: number, sessionTokens: number, agentCalls: number, agentTokens: number) => ({
  session: { calls: sessionCalls, tokens: sessionTokens },
  agent: { calls: agentCalls, tokens: agentTokens },
});

describe('the summarizer spend limit', () => {
  it('is read from its environment variables, unset meaning no limit, with a 60-minute window by default', () => {
    const none = summarizerSpendLimits(configFromEnv({}));
    expect(none).toEqual({ perSession: {}, perAgent: {}, windowMinutes: 60 });
    expect(spendLimited(none)).toBe(false);
    const set = summarizerSpendLimits(
      configFromEnv({
        KEEL_SUMMARIZER_SESSION_CALLS: '3',
        KEEL_SUMMARIZER_AGENT_TOKENS: '50000',
        KEEL_SUMMARIZER_SPEND_WINDOW_MINUTES: '30',
      }),
    );
    expect(set).toEqual({ perSession: { calls: 3 }, perAgent: { tokens: 50_000 }, windowMinutes: 30 });
    expect(spendLimited(set)).toBe(true);
  });

  it('rejects a bad value naming the variable', () => {
    expect(() => configFromEnv({ KEEL_SUMMARIZER_SESSION_TOKENS: 'lots' })).toThrow(ConfigError);
    expect(() => configFromEnv({ KEEL_SUMMARIZER_SESSION_TOKENS: 'lots' })).toThrow(/KEEL_SUMMARIZER_SESSION_TOKENS/);
    expect(() => configFromEnv({ KEEL_SUMMARIZER_SPEND_WINDOW_MINUTES: '0' })).toThrow(
      /KEEL_SUMMARIZER_SPEND_WINDOW_MINUTES: a whole number of minutes > 0/,
    );
  });

  it('refuses the next call once a ceiling is reached, naming the first one reached and its variable', () => {
    const limits = { perSession: { calls: 2, tokens: 10_000 }, perAgent: { calls: 5 }, windowMinutes: 60 };
    expect(spendLimitReason(spent(1, 9_999, 4, 0), limits)).toBeUndefined();
    expect(spendLimitReason(spent(2, 0, 2, 0), limits)).toBe(
      'summarizer spend limit reached: 2 of 2 calls for this session in 60 min (KEEL_SUMMARIZER_SESSION_CALLS); extractive summary instead',
    );
    expect(spendLimitReason(spent(1, 12_000, 1, 0), limits)).toContain('12,000 of 10,000 tokens for this session');
    expect(spendLimitReason(spent(0, 0, 5, 0), limits)).toContain('(KEEL_SUMMARIZER_AGENT_CALLS)');
  });
});
