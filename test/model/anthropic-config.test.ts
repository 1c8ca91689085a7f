import { DEFAULTS } from '../../src/config/defaults';
import {
  AnthropicConfigError,
  DEFAULT_ANTHROPIC_BASE_URL,
  parseAnthropicClientConfig,
} from '../../src/model/anthropic-config';
import { AnthropicModelClient } from '../../src/model/anthropic-client';

describe('parseAnthropicClientConfig', () => {
  it('keeps the key and base URL, with defaults for the rest', () => {
    expect(parseAnthropicClientConfig({ apiKey: 'sk-ant-1', baseURL: 'http://127.0.0.1:9999' })).toEqual({
      apiKey: 'sk-ant-1',
      baseURL: 'http://127.0.0.1:9999',
      timeoutMs: DEFAULTS.modelRequestTimeoutMs,
      idleTimeoutMs: DEFAULTS.modelStreamIdleTimeoutMs,
      baseURLSetting: 'ANTHROPIC_BASE_URL',
    });
  });

  it("uses Anthropic's API when no base URL is set", () => {
    expect(parseAnthropicClientConfig({ apiKey: 'k' }).baseURL).toBe(DEFAULT_ANTHROPIC_BASE_URL);
  });

  it.each<[string, Record<string, string>, string]>([
    ['a missing key', {}, 'ANTHROPIC_API_KEY'],
    ['an empty key', { apiKey: '' }, 'ANTHROPIC_API_KEY'],
    ['a base URL that is not a URL', { apiKey: 'k', baseURL: 'localhost 8080' }, 'ANTHROPIC_BASE_URL'],
  ])('rejects %s, naming the variable', (_what, input, field) => {
    const attempt = (): unknown => parseAnthropicClientConfig(input);
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
