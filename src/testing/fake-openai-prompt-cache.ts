/**
 * The fake's OpenAI prompt cache, automatic as the API's: no markers; a prompt of at least 1024
 * tokens caches its prefixes, and a later prompt that repeats one byte for byte reads it, in steps
 * of 128 tokens, reported as `usage.prompt_tokens_details.cached_tokens` (part of `prompt_tokens`).
 * The prompt is the tools, then the messages (the system prompt is the first); tokens are counted
 * as the fake counts them elsewhere: ~4 characters a token.
 */
import { createHash } from 'node:crypto';
import type { FakeRequestBody } from './fake-anthropic';

/** Prompts shorter than this are neither cached nor read from the cache. */
const MIN_CACHED_TOKENS = 1024;
/** Cache hits grow in steps of this many tokens. */
const CACHE_STEP_TOKENS = 128;
const CHARS_PER_TOKEN = 4;

export class FakeOpenAiPromptCache {
  private readonly written = new Set<string>();

  /** Forgets every cached prefix (as the cache's eviction would). */
  clear(): void {
    this.written.clear();
  }

  /** Reads the longest cached prefix of the request's prompt and caches its own; returns `cached_tokens`. */
  serve(body: FakeRequestBody): number {
    const prompt = `${JSON.stringify(body.tools ?? [])}\n${JSON.stringify(body.messages ?? [])}`;
    const running = createHash('sha256');
    let hashed = 0;
    let cached = 0;
    const prefixes: string[] = [];
    for (let tokens = MIN_CACHED_TOKENS; tokens * CHARS_PER_TOKEN <= prompt.length; tokens += CACHE_STEP_TOKENS) {
      running.update(prompt.slice(hashed, tokens * CHARS_PER_TOKEN));
      hashed = tokens * CHARS_PER_TOKEN;
      const key = running.copy().digest('hex');
      if (this.written.has(key)) cached = tokens;
      prefixes.push(key);
    }
    for (const key of prefixes) this.written.add(key);
    return cached;
  }
}
