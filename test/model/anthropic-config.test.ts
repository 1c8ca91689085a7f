import { DEFAULTS } from '../../src/config/defaults';
import { AnthropicConfigError, DEFAULT_ANTHROPIC_BASE_URL, anthropicConfigFromEnv, parseAnthropicClientConfig } from '../../src/model/anthropic-config';
import { AnthropicModelClient } from '../../src/model/anthropic-client';

describe('anthropicConfigFromEnv', () => {
  it('reads the key and base URL, with defaults for the rest', () => {
    expect(anthropicConfigFromEnv({ ANTHROPIC_API_KEY: 'sk-ant-1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9999' })).toEqual({
      apiKey: 'sk-ant-1',
      baseURL: 'http://127.0.0.1:9999',
      timeoutMs: DEFAULTS.modelRequestTimeoutMs,
      idleTimeoutMs: DEFAULTS.modelStreamIdleTimeoutMs,
    });
  });

  it("uses Anthropic's API when no base URL is set (empty counts as unset)", () => {
    expect(anthropicConfigFromEnv({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: '' }).baseURL).toBe(DEFAULT_ANTHROPIC_BASE_URL);
  });

  it.each<[string, Record<string, string>, string]>([
    ['a missing key', {}, 'ANTHROPIC_API_KEY'],
    ['an empty key', { ANTHROPIC_API_KEY: '' }, 'ANTHROPIC_API_KEY'],
    ['a base URL that is not a URL', { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'localhost 8080' }, 'ANTHROPIC_BASE_URL'],
  ])('rejects %s, naming the variable', (_what, env, field) => {
    const attempt = (): unknown => anthropicConfigFromEnv(env);
    expect(attempt).toThrow(AnthropicConfigError);
    expect(attempt).toThrow(field);
  });
});

describe('AnthropicModelClient construction', () => {
  it('validates its config instead of reading process.env', () => {
    expect(() => new AnthropicModelClient({ apiKey: '' })).toThrow(AnthropicConfigError);
    expect(() => parseAnthropicClientConfig({ apiKey: 'k', timeoutMs: -1 })).toThrow(AnthropicConfigError);
  });
});
