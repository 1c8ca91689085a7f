import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import {
  estimateMessagesTokens,
  estimateTokens,
  IMAGE_TOKEN_ESTIMATE,
  MESSAGE_OVERHEAD_TOKENS,
  TokenCache,
} from '../../src/context/estimate-tokens';
import type { AgentMessage } from '../../src/context/types';
import { assistant, call, result, user } from './factories';

const text = 'The quick brown fox jumps over the lazy dog. '.repeat(20);

describe('estimateTokens', () => {
  it('tokenizes text with gpt-tokenizer and applies the 1.2 safety margin', () => {
    expect(estimateTokens(user(text))).toBe(Math.ceil((countTokens(text) + MESSAGE_OVERHEAD_TOKENS) * 1.2));
  });

  it('honours an injected tokenizer and margin', () => {
    expect(estimateTokens(user('abcd'), { countTokens: (t) => t.length, safetyMargin: 1 })).toBe(
      4 + MESSAGE_OVERHEAD_TOKENS,
    );
  });

  it("counts a tool call by its name and its arguments' JSON", () => {
    const chars = { countTokens: (t: string) => t.length, safetyMargin: 1 };
    const args = { path: 'src/a.ts' };
    expect(estimateTokens(assistant(call('t1', 'read', args)), chars)).toBe(
      MESSAGE_OVERHEAD_TOKENS + 'read'.length + JSON.stringify(args).length,
    );
  });

  it('counts an image as a fixed estimate, not by its base64 size', () => {
    const small = { role: 'user', content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] } as AgentMessage;
    const large = {
      role: 'user',
      content: [{ type: 'image', data: 'A'.repeat(400_000), mimeType: 'image/png' }],
    } as AgentMessage;
    expect(estimateTokens(large)).toBe(estimateTokens(small));
    expect(estimateTokens(large)).toBe(Math.ceil((IMAGE_TOKEN_ESTIMATE + MESSAGE_OVERHEAD_TOKENS) * 1.2));
  });

  it('never counts tool-result details', () => {
    const plain = result('c', 'short');
    expect(estimateTokens({ ...plain, details: { huge: 'x'.repeat(100_000) } })).toBe(estimateTokens(plain));
  });

  it('counts tool-call names and arguments', () => {
    expect(estimateTokens(assistant(call('c', 'read', { path: 'x'.repeat(2_000) })))).toBeGreaterThan(
      estimateTokens(assistant(call('c', 'read', { path: 'x' }))),
    );
  });

  it('treats special-token strings in transcripts as plain text instead of throwing', () => {
    expect(estimateTokens(user('before <|endoftext|> after'))).toBeGreaterThan(0);
  });
});

describe('estimateMessagesTokens', () => {
  const messages = [user(text), assistant('reply'), result('c', text)];

  it('sums the per-message estimates', () => {
    expect(estimateMessagesTokens(messages)).toBe(messages.reduce((n, m) => n + estimateTokens(m), 0));
  });

  it('counts only new entries when a cache keyed by entry id is reused across turns', () => {
    const cache = new TokenCache();
    const keyOf = (_m: AgentMessage, i: number) => `entry-${i}`;
    const first = estimateMessagesTokens(messages, { cache, keyOf });
    expect(cache).toMatchObject({ hits: 0, misses: 3 });
    const next = [...messages, user('another turn')];
    const second = estimateMessagesTokens(next, { cache, keyOf });
    expect(cache).toMatchObject({ hits: 3, misses: 4 });
    expect(second).toBe(first + estimateTokens(user('another turn')));
  });

  it('caches by object identity when no key is given', () => {
    const cache = new TokenCache();
    estimateMessagesTokens(messages, { cache });
    estimateMessagesTokens(messages, { cache });
    expect(cache).toMatchObject({ hits: 3, misses: 3 });
  });

  it('evicts the oldest keyed entries beyond its capacity', () => {
    const cache = new TokenCache(2);
    estimateMessagesTokens(messages, { cache, keyOf: (_m, i) => `e${i}` });
    expect(cache.size).toBe(2);
  });
});
