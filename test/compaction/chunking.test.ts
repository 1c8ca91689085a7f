import { computeAdaptiveChunkRatio, isOversizedForSummary } from '../../src/compaction/adaptive-chunk-ratio';
import { chunkUnitsByMaxTokens } from '../../src/compaction/split-messages';
import { isToolCallBlock, type AgentMessage } from '../../src/context/types';
import { assistant, call, charsOver4, result, text, user } from './factories';

const chunkMessagesByMaxTokens = (messages: AgentMessage[], maxTokens: number, estimate: typeof charsOver4) =>
  chunkUnitsByMaxTokens(messages, maxTokens, estimate).map(([s, e]) => messages.slice(s, e));

/** Every tool result sits in the same chunk as its call. */
function expectBatchesIntact(chunks: AgentMessage[][]): void {
  const chunkOfCall = new Map<string, number>();
  chunks.forEach((chunk, c) =>
    chunk.forEach((m) => {
      if (m.role === 'assistant') m.content.filter(isToolCallBlock).forEach((b) => chunkOfCall.set(b.id, c));
      if (m.role === 'toolResult') expect(chunkOfCall.get(m.toolCallId)).toBe(c);
    }),
  );
}

describe('computeAdaptiveChunkRatio', () => {
  const windowOf1000 = 1000;
  it.each<[string, number, number]>([
    ['keeps 0.4 when the average message is small (50 tokens = 6% with margin)', 50, 0.4],
    ['shrinks by twice the share when the average exceeds 10% (100 tokens → 12%)', 100, 0.4 - 0.24],
    ['never goes below 0.15 (200 tokens → 24%)', 200, 0.15],
  ])('%s', (_name, tokensPerMessage, expected) => {
    const msgs = [user(text(tokensPerMessage)), user(text(tokensPerMessage))];
    expect(computeAdaptiveChunkRatio(msgs, windowOf1000, charsOver4)).toBeCloseTo(expected, 10);
  });

  it('is 0.4 for no messages', () => {
    expect(computeAdaptiveChunkRatio([], 1000, charsOver4)).toBe(0.4);
  });
});

describe('isOversizedForSummary', () => {
  it.each<[number, boolean]>([
    [416, false], // 416 × 1.2 = 499.2 ≤ 500
    [417, true], // 417 × 1.2 = 500.4 > 500
  ])('a %i-token message in a 1000-token window: %s', (tokens, expected) => {
    expect(isOversizedForSummary(user(text(tokens)), 1000, charsOver4)).toBe(expected);
  });
});

describe('chunkUnitsByMaxTokens', () => {
  it('packs consecutive messages up to the ceiling', () => {
    const msgs = [1, 2, 3, 4, 5].map(() => user(text(10)));
    expect(chunkMessagesByMaxTokens(msgs, 25, charsOver4).map((c) => c.length)).toEqual([2, 2, 1]);
  });

  it('gives a tool batch larger than the ceiling a chunk of its own, unsplit', () => {
    const msgs = [user(text(10)), call(['c1']), result('c1', text(100)), assistant(text(10))];
    const chunks = chunkMessagesByMaxTokens(msgs, 25, charsOver4);
    expect(chunks).toEqual([[msgs[0]], [msgs[1], msgs[2]], [msgs[3]]]);
  });

  it('never separates results from their calls across many batches', () => {
    const msgs: AgentMessage[] = [];
    for (let i = 0; i < 30; i++)
      msgs.push(user(text(3)), call([`a${i}`, `b${i}`]), result(`a${i}`, text(7)), result(`b${i}`, text(4)));
    expectBatchesIntact(chunkMessagesByMaxTokens(msgs, 20, charsOver4));
  });
});
