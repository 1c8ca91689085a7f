/**
 * The fake's Anthropic prompt cache: refuses what the API refuses about `cache_control`, and serves
 * cache reads and writes the way the API reports them in `usage`.
 *
 * The prompt is a sequence of blocks in cache order (tools, then system, then each message's content
 * blocks). A `cache_control` block writes the exact prefix up to and including it (markers
 * themselves are not part of the key) once the prefix reaches the model's minimum cacheable length;
 * a later request reads the longest written prefix it repeats byte for byte, found at one of its own
 * breakpoints or up to 20 blocks before one (the API's lookback). Tokens are counted as the fake
 * counts them elsewhere: ~4 characters a token, of the blocks as the body sends them (not of their
 * keys, whose position fields would make a cached prefix count more than the whole prompt).
 */
import { createHash } from 'node:crypto';
import type { FakeRequestBody } from './fake-anthropic';

/** Anthropic allows this many `cache_control` blocks per request. */
const MAX_BREAKPOINTS = 4;
/** How far before a breakpoint the API looks for an earlier cached prefix. */
const LOOKBACK_BLOCKS = 20;
/** Claude Sonnet/Opus: shorter prefixes are not cached (no error, no write). */
export const FAKE_DEFAULT_CACHE_MIN_TOKENS = 1024;

export interface FakeCacheUsage {
  readonly cache_creation_input_tokens: number;
  readonly cache_read_input_tokens: number;
}

interface PromptBlock {
  /** The block as keyed: where it sits and its content, without `cache_control`. */
  readonly key: string;
  readonly marked: boolean;
  /**
   * Characters the block takes in the request body (a message's first block also carries the
   * message's own wrapper): a prefix counts the same in every request, and never more than the body.
   */
  readonly chars: number;
}

export class FakePromptCache {
  private readonly written = new Set<string>();

  constructor(public minTokens = FAKE_DEFAULT_CACHE_MIN_TOKENS) {}

  /** Forgets every cached prefix (as the 5-minute TTL would). */
  clear(): void {
    this.written.clear();
  }

  /** The API's 400 message for the request's `cache_control` use, or undefined. */
  problem(body: FakeRequestBody): string | undefined {
    const markers = promptMarkers(body);
    if (markers.length > MAX_BREAKPOINTS)
      return `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${markers.length}.`;
    if (markers.some((m) => (m as { type?: unknown } | null)?.type !== 'ephemeral'))
      return `cache_control.type: Input should be 'ephemeral'`;
    return undefined;
  }

  /** Reads and writes the request's prefixes; returns the usage fields the API would report. */
  serve(body: FakeRequestBody): FakeCacheUsage {
    const blocks = promptBlocks(body);
    const breakpoints = blocks.flatMap((b, i) => (b.marked ? [i] : []));
    if (breakpoints.length === 0) return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    // A prefix is only ever looked up at a breakpoint or within the lookback before one, so only
    // those prefixes are hashed: one running hash over the blocks, copied where a key is needed.
    const needed = new Set(
      breakpoints.flatMap((b) => Array.from({ length: Math.min(b, LOOKBACK_BLOCKS) + 1 }, (_, k) => b - k)),
    );
    const hashes = new Map<number, string>();
    const tokens: number[] = [];
    const running = createHash('sha256');
    let chars = 0;
    for (let i = 0; i <= breakpoints[breakpoints.length - 1]!; i++) {
      const key = blocks[i]!.key;
      // A newline never occurs inside JSON text, so it separates blocks unambiguously.
      running.update(key).update('\n');
      chars += blocks[i]!.chars;
      tokens.push(Math.floor(chars / 4));
      if (needed.has(i)) hashes.set(i, running.copy().digest('hex'));
    }
    let readUpTo = -1;
    for (const b of breakpoints) {
      for (let k = b; k >= Math.max(0, b - LOOKBACK_BLOCKS); k--) {
        if (this.written.has(hashes.get(k)!)) {
          readUpTo = Math.max(readUpTo, k);
          break;
        }
      }
    }
    const read = readUpTo >= 0 ? tokens[readUpTo]! : 0;
    const last = breakpoints[breakpoints.length - 1]!;
    let write = 0;
    for (const b of breakpoints) {
      if (tokens[b]! < this.minTokens) continue;
      this.written.add(hashes.get(b)!);
      if (b === last && b > readUpTo) write = tokens[b]! - read;
    }
    return { cache_creation_input_tokens: write, cache_read_input_tokens: read };
  }
}

/** The `cache_control` markers of the prompt's blocks, in cache order (no keys built: checking is cheap). */
function promptMarkers(body: FakeRequestBody): unknown[] {
  const out: unknown[] = [];
  forEachPromptBlock(body, (_where, block) => {
    const marker =
      typeof block === 'object' && block !== null ? (block as { cache_control?: unknown }).cache_control : undefined;
    if (marker !== undefined) out.push(marker);
  });
  return out;
}

/** The prompt's blocks in cache order, each keyed by where it sits and its content without `cache_control`. */
function promptBlocks(body: FakeRequestBody): PromptBlock[] {
  const out: PromptBlock[] = [];
  forEachPromptBlock(body, (where, block) => {
    const { cache_control: marker, ...rest } = (
      typeof block === 'object' && block !== null ? block : { value: block }
    ) as Record<string, unknown>;
    const wrapper = where.index === 0 ? JSON.stringify({ role: where.role, content: [] }).length + 1 : 0;
    out.push({
      key: JSON.stringify({ ...where, block: rest }),
      marked: marker !== undefined,
      chars: wrapper + JSON.stringify(rest).length + 1,
    });
  });
  return out;
}

/** Visits tools, system, then messages (string content counts as one text block). */
function forEachPromptBlock(
  body: FakeRequestBody,
  visit: (where: Record<string, unknown>, block: unknown) => void,
): void {
  (body.tools ?? []).forEach((tool, i) => visit({ tool: i }, tool));
  const system = body.system;
  if (typeof system === 'string') visit({ system: 0 }, { type: 'text', text: system });
  else if (Array.isArray(system)) system.forEach((block, i) => visit({ system: i }, block));
  (body.messages ?? []).forEach((message, m) => {
    const content =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content }]
        : ((message.content ?? []) as unknown[]);
    content.forEach((block, i) => visit({ message: m, role: message.role, index: i }, block));
  });
}
