/**
 * Token estimates for messages (gpt-tokenizer with OpenClaw's ×1.2 safety margin, cached per entry).
 * Estimates returned here already include the safety margin: do not multiply them again.
 */
// cl100k_base, not the package's default o200k_base: neither is Claude's tokenizer (the safety margin
// covers both), they count nearly alike on prose and markdown, and cl100k's tables take about half
// the memory in every process.
import { countTokens as gptCountTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { DEFAULTS } from '../config/defaults';
import { isToolCallBlock, toolCallArguments, type AgentMessage } from './types';

/**
 * Fixed estimate for one image block (Keel): images are billed by pixels, not by their base64,
 * and ~1,200 tokens is a typical downscaled screenshot (Pi counts an image as 4,800 chars ≈ 1,200 tokens).
 */
export const IMAGE_TOKEN_ESTIMATE = DEFAULTS.imageTokenEstimate;
/** Per-message framing (role markers, block separators) that the text alone does not show (Keel). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Counts the tokens of a piece of text. */
export type CountTokens = (text: string) => number;

/** Longest unbroken (no whitespace) run handed to the tokenizer at once: BPE is quadratic on such runs. */
const MAX_UNBROKEN_RUN = 256;
const LONG_RUN = new RegExp(`\\S{${MAX_UNBROKEN_RUN + 1},}`, 'g');

const gpt = (text: string): number => (text.length === 0 ? 0 : gptCountTokens(text, { disallowedSpecial: new Set() }));

/**
 * gpt-tokenizer's count, with special-token strings treated as plain text (they occur in real
 * transcripts). Long unbroken runs (base64, minified code, `xxxx…`) are counted in 256-character
 * slices: whole, a 200 KB run takes minutes and stalls the worker's heartbeats; sliced, it is linear
 * and the count differs by a token or so per slice.
 */
export const defaultCountTokens: CountTokens = (text) => {
  if (text.length <= MAX_UNBROKEN_RUN) return gpt(text);
  let total = 0;
  let last = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    total += gpt(text.slice(last, match.index));
    for (let i = 0; i < match[0].length; i += MAX_UNBROKEN_RUN) total += gpt(match[0].slice(i, i + MAX_UNBROKEN_RUN));
    last = match.index! + match[0].length;
  }
  return total + gpt(text.slice(last));
};

export interface EstimateOptions {
  /** The tokenizer; gpt-tokenizer by default (pure functions take it injected in tests). */
  countTokens?: CountTokens;
  /** Safety margin multiplier; 1.2 by default (OpenClaw). */
  safetyMargin?: number;
}

/**
 * Estimated prompt tokens of one message, safety margin included (rounded up). Text, thinking, tool
 * names and tool-call arguments (as JSON) are tokenized; each image counts {@link IMAGE_TOKEN_ESTIMATE};
 * a tool result's `details` is never counted (it is never sent).
 */
export function estimateTokens(message: AgentMessage, options: EstimateOptions = {}): number {
  const count = options.countTokens ?? defaultCountTokens;
  const margin = options.safetyMargin ?? DEFAULTS.tokenSafetyMargin;
  return Math.ceil(rawTokens(message, count) * margin);
}

/** Counts tokens of one message without the safety margin. */
function rawTokens(message: AgentMessage, count: CountTokens): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  const content = (message as { content: unknown }).content;
  if (typeof content === 'string') return tokens + count(content);
  if (message.role === 'toolResult') tokens += count(message.toolName ?? '');
  if (!Array.isArray(content)) return tokens;
  for (const block of content as Array<Record<string, unknown>>) {
    if (!block || typeof block !== 'object') continue;
    if (block.type === 'text' && typeof block.text === 'string') tokens += count(block.text);
    else if (block.type === 'thinking' && typeof block.thinking === 'string') tokens += count(block.thinking);
    else if (block.type === 'image') tokens += IMAGE_TOKEN_ESTIMATE;
    else {
      const typed = block as { type: string };
      if (isToolCallBlock(typed))
        tokens += count(String(typed.name ?? '')) + count(JSON.stringify(toolCallArguments(typed) ?? {}));
    }
  }
  return tokens;
}

/**
 * Remembers per-entry estimates so a turn re-counts only new entries. Keys are transcript entry ids
 * (entries are append-only, so an id's content never changes); messages without a key are cached by
 * object identity. One cache per tokenizer/margin setting.
 */
export class TokenCache {
  private readonly byKey = new Map<string, number>();
  private readonly byObject = new WeakMap<object, number>();
  /** Estimates served from the cache. */
  hits = 0;
  /** Estimates that had to be computed. */
  misses = 0;

  /** @param maxEntries keyed entries kept before the oldest are evicted (insertion order). */
  constructor(private readonly maxEntries = 100_000) {}

  /** The cached estimate, or computes, stores and returns it. */
  getOrCompute(key: string | undefined, message: AgentMessage, compute: () => number): number {
    const cached = key !== undefined ? this.byKey.get(key) : this.byObject.get(message);
    if (cached !== undefined) {
      this.hits += 1;
      return cached;
    }
    this.misses += 1;
    const value = compute();
    if (key === undefined) {
      this.byObject.set(message, value);
    } else {
      if (this.byKey.size >= this.maxEntries) this.byKey.delete(this.byKey.keys().next().value as string);
      this.byKey.set(key, value);
    }
    return value;
  }

  /** Number of keyed entries held. */
  get size(): number {
    return this.byKey.size;
  }
}

export interface EstimateMessagesOptions extends EstimateOptions {
  /** Reuse estimates across calls (per turn, only new entries are counted). */
  cache?: TokenCache;
  /** The cache key of a message, normally its transcript entry id. */
  keyOf?: (message: AgentMessage, index: number) => string | undefined;
}

/** Sum of {@link estimateTokens} over the messages, reading and filling `cache` when given. */
export function estimateMessagesTokens(
  messages: readonly AgentMessage[],
  options: EstimateMessagesOptions = {},
): number {
  const { cache, keyOf } = options;
  let total = 0;
  for (let i = 0; i < messages.length; i += 1) {
    const message = messages[i];
    total += cache
      ? cache.getOrCompute(keyOf?.(message, i), message, () => estimateTokens(message, options))
      : estimateTokens(message, options);
  }
  return total;
}
