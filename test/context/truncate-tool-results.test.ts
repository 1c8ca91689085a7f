import { truncateOversizedToolResults } from '../../src/context/truncate-tool-results';
import type { AgentMessage } from '../../src/context/types';

const result = (text: string): AgentMessage => ({
  role: 'toolResult',
  toolCallId: 'c1',
  toolName: 'read',
  content: [{ type: 'text', text }],
});

describe('truncateOversizedToolResults', () => {
  it('returns the same array when every result fits', () => {
    const messages = [result('short'), { role: 'user', content: 'x'.repeat(1000) } as AgentMessage];
    const out = truncateOversizedToolResults(messages, 100);
    expect(out.messages).toBe(messages);
    expect(out.truncated).toEqual([]);
  });

  it('keeps the first maxChars characters and appends a note naming both sizes', () => {
    const big = 'a'.repeat(5000);
    const out = truncateOversizedToolResults([result(big)], 1200);
    const blocks = (out.messages[0] as Extract<AgentMessage, { role: 'toolResult' }>).content;
    expect(blocks[0]).toEqual({ type: 'text', text: 'a'.repeat(1200) });
    expect((blocks[1] as { text: string }).text).toContain('first 1,200 of 5,000 characters');
    expect(out.truncated).toEqual([{ index: 0, toolCallId: 'c1', originalChars: 5000, keptChars: 1200 }]);
  });

  it("cuts by the limit of each call, though it remembers each result's size (a cached window's messages come again)", () => {
    const messages = [result('a'.repeat(300)), result('b'.repeat(50))];
    expect(truncateOversizedToolResults(messages, 400).messages).toBe(messages);
    const cut = truncateOversizedToolResults(messages, 100);
    expect(cut.truncated.map((t) => t.originalChars)).toEqual([300]);
    expect(cut.messages[1]).toBe(messages[1]);
    expect(truncateOversizedToolResults(messages, 40).truncated.map((t) => t.originalChars)).toEqual([300, 50]);
  });

  it('never touches user text however long it is', () => {
    const user: AgentMessage = { role: 'user', content: 'u'.repeat(10_000) };
    expect(truncateOversizedToolResults([user], 10).messages[0]).toBe(user);
  });
});
