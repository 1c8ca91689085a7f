import { ReplyAssembler, type ReplyStreamEvent } from '../../src/streaming/reply-assembler';
import type { ReplyChunk } from '../../src/streaming/reply-channel';

function assemble(chunks: ReplyChunk[]): { events: ReplyStreamEvent[]; assembler: ReplyAssembler } {
  const events: ReplyStreamEvent[] = [];
  const assembler = new ReplyAssembler((e) => events.push(e));
  for (const chunk of chunks) assembler.accept(chunk);
  return { events, assembler };
}

const chunk = (call: string, attempt: number, seq: number, text: string, end?: boolean): ReplyChunk => ({
  call,
  attempt,
  seq,
  text,
  ...(end ? { end } : {}),
});

describe('ReplyAssembler', () => {
  it('emits text in sequence order, holding a chunk that arrives early and dropping duplicates', () => {
    const { events, assembler } = assemble([
      chunk('a', 1, 0, ''),
      chunk('a', 1, 2, ' world', true),
      chunk('a', 1, 1, 'Hello'),
      chunk('a', 1, 1, 'Hello'),
    ]);
    expect(events).toEqual([
      { type: 'text', delta: 'Hello', soFar: 'Hello', call: 0 },
      { type: 'text', delta: ' world', soFar: 'Hello world', call: 0 },
    ]);
    expect(assembler.ended('a')).toBe(true);
  });

  it('restarts a model call when a higher attempt announces itself, and ignores the lower attempt after that', () => {
    const { events, assembler } = assemble([
      chunk('a', 1, 0, ''),
      chunk('a', 1, 1, 'Draft'),
      chunk('a', 2, 0, ''),
      chunk('a', 1, 2, ' late words'),
      chunk('a', 2, 1, 'Final', true),
    ]);
    expect(events).toEqual([
      { type: 'text', delta: 'Draft', soFar: 'Draft', call: 0 },
      { type: 'restart', soFar: '', call: 0 },
      { type: 'text', delta: 'Final', soFar: 'Final', call: 0 },
    ]);
    expect(assembler.ended('a')).toBe(true);
  });

  it('appends the next model call after the last, and ignores an earlier call once the turn moved on', () => {
    const { events, assembler } = assemble([
      chunk('a', 1, 0, ''),
      chunk('a', 1, 1, 'Checking.', true),
      chunk('b', 1, 0, ''),
      chunk('a', 1, 0, ''),
      chunk('a', 2, 0, 'from a dead attempt'),
      chunk('b', 1, 1, ' Done.', true),
    ]);
    expect(events.map((e) => (e.type === 'tool' ? [e.type] : [e.type, e.soFar, e.call]))).toEqual([
      ['text', 'Checking.', 0],
      ['text', 'Checking. Done.', 1],
    ]);
    expect(assembler.ended('a')).toBe(false);
    expect(assembler.ended('b')).toBe(true);
  });

  it('does not announce a restart when nothing of the failed attempt was shown', () => {
    const { events } = assemble([chunk('a', 1, 0, ''), chunk('a', 2, 0, ''), chunk('a', 2, 1, 'Hi', true)]);
    expect(events).toEqual([{ type: 'text', delta: 'Hi', soFar: 'Hi', call: 0 }]);
  });

  it('says each tool call once, whatever its activity retries sent', () => {
    const events: ReplyStreamEvent[] = [];
    const assembler = new ReplyAssembler((e) => events.push(e));
    assembler.acceptTool({ tool: { id: 'toolu_1', name: 'read_file', isError: false } });
    assembler.acceptTool({ tool: { id: 'toolu_1', name: 'read_file', isError: false } });
    assembler.acceptTool({ tool: { id: 'toolu_2', name: 'exec', isError: true } });
    expect(events).toEqual([
      { type: 'tool', id: 'toolu_1', name: 'read_file', isError: false },
      { type: 'tool', id: 'toolu_2', name: 'exec', isError: true },
    ]);
  });
});
