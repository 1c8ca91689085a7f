import { TurnProgress } from '../../workflows/turn-progress';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

describe('TurnProgress', () => {
  it('starts after the user entry with no usage, and finishes with the usage so far', () => {
    const turn = new TurnProgress(3, 'user-1', true, 'req-1');
    expect(turn.parentId).toBe('user-1');
    expect(turn.finish).toEqual({ usageBefore: usage(0, 0), touch: true });
  });

  it('adds each reply usage and follows each reply and tool result with the next entry', () => {
    const turn = new TurnProgress(1, 'user-1', false, undefined);
    turn.replied({ entryId: 'reply-1', text: '', usage: usage(10, 2, 100, 5) });
    expect(turn.parentId).toBe('reply-1');
    turn.toolAnswered({ id: 'toolu_1', name: 'lookup' }, { entryId: 'result-1', isError: false });
    turn.toolAnswered({ id: 'toolu_2', name: 'count_rows' }, { entryId: 'result-2', isError: true });
    expect(turn.parentId).toBe('result-2');
    turn.replied({ entryId: 'reply-2', text: 'done', usage: usage(3, 4, 200, 0) });
    expect(turn.finish).toEqual({ usageBefore: usage(13, 6, 300, 5), touch: false });
    expect(turn.result({ entryId: 'reply-2', text: 'done', usage: usage(3, 4, 200, 0) }, 7)).toEqual({
      reply: 'done',
      silent: false,
      userEntryId: 'user-1',
      assistantEntryId: 'reply-2',
      turn: 7,
      usage: usage(13, 6, 300, 5),
      modelCalls: 2,
      toolCalls: [
        { id: 'toolu_1', name: 'lookup', isError: false },
        { id: 'toolu_2', name: 'count_rows', isError: true },
      ],
    });
  });

  it('reports a silent reply as empty, and no toolCalls field for a turn without tools', () => {
    const turn = new TurnProgress(1, 'user-1', true, 'req-1');
    const final = { entryId: 'reply-1', text: 'NO_REPLY', usage: usage(1, 1) };
    turn.replied(final);
    const result = turn.result(final, 1);
    expect(result).toMatchObject({ reply: '', silent: true, modelCalls: 1 });
    expect(result).not.toHaveProperty('toolCalls');
  });
});
