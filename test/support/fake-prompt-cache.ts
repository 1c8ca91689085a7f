/**
 * The fake's Anthropic prompt cache: refuses what the API refuses about `cache_control`, and serves
 * cache reads and writes the way the API reports them in `usage`.
 *
 * The prompt is a sequence of blocks in cache order (tools, then system, then each message's content
 * blocks). A `cache_control` block writes the exact prefix up to and including it (markers
 * themselves are not part of the key) once the prefix reaches the model's minimum cacheable length;
 * a later request reads the longest written prefix it repeats byte for byte, found at one of its own
 * breakpoints or up to 20 blocks before one (the API's lookback). Tokens are counted as the fake
 * counts them elsewhere: ~4 characters a token.
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
  readonly markerType: unknown;
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
    const blocks = promptBlocks(body);
    const marked = blocks.filter((b) => b.marked);
    if (marked.length > MAX_BREAKPOINTS) return `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${marked.length}.`;
    const wrongType = marked.find((b) => b.markerType !== 'ephemeral');
    if (wrongType) return `cache_control.type: Input should be 'ephemeral'`;
    return undefined;
  }

  /** Reads and writes the request's prefixes; returns the usage fields the API would report. */
  serve(body: FakeRequestBody): FakeCacheUsage {
    const blocks = promptBlocks(body);
    const hashes: string[] = [];
    const tokens: number[] = [];
    let hash = '';
    let chars = 0;
    for (const block of blocks) {
      hash = createHash('sha256').update(hash).update(block.key).digest('hex');
      chars += block.key.length;
      hashes.push(hash);
      tokens.push(Math.ceil(chars / 4));
    }
    const breakpoints = blocks.flatMap((b, i) => (b.marked ? [i] : []));
    if (breakpoints.length === 0) return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    let readUpTo = -1;
    for (const b of breakpoints) {
      for (let k = b; k >= Math.max(0, b - LOOKBACK_BLOCKS); k--) {
        if (this.written.has(hashes[k]!)) {
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
      this.written.add(hashes[b]!);
      if (b === last && b > readUpTo) write = tokens[b]! - read;
    }
    return { cache_creation_input_tokens: write, cache_read_input_tokens: read };
  }
}

/** The prompt's blocks in cache order: tools, system, messages (string content counts as one text block). */
function promptBlocks(body: FakeRequestBody): PromptBlock[] {
  const out: PromptBlock[] = [];
  const add = (where: Record<string, unknown>, block: unknown): void => {
    const { cache_control: marker, ...rest } = (typeof block === 'object' && block !== null ? block : { value: block }) as Record<string, unknown>;
    out.push({ key: JSON.stringify({ ...where, block: rest }), marked: marker !== undefined, markerType: (marker as { type?: unknown } | undefined)?.type });
  };
  (body.tools ?? []).forEach((tool, i) => add({ tool: i }, tool));
  const system = body.system;
  if (typeof system === 'string') add({ system: 0 }, { type: 'text', text: system });
  else if (Array.isArray(system)) system.forEach((block, i) => add({ system: i }, block));
  (body.messages ?? []).forEach((message, m) => {
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : ((message.content ?? []) as unknown[]);
    content.forEach((block, i) => add({ message: m, role: message.role, index: i }, block));
  });
  return out;
}
