import { parseChatLine } from '../../src/cli/chat-commands';

describe('parseChatLine', () => {
  it.each([
    ['hello there', { kind: 'message', text: 'hello there' }],
    ['/help', { kind: 'help' }],
    ['/quit', { kind: 'quit' }],
    ['/exit', { kind: 'quit' }],
    ['/status', { kind: 'status' }],
    ['/compact', { kind: 'compact' }],
    ['/compact keep the   open tasks', { kind: 'compact', instructions: 'keep the open tasks' }],
    ['/new', { kind: 'new', text: '/new' }],
    ['/reset and start over', { kind: 'new', text: '/reset and start over' }],
    ['/approve', { kind: 'approve', words: [] }],
    ['/approve looks  right', { kind: 'approve', words: ['looks', 'right'] }],
    ['/deny 0f3c2a1b too much', { kind: 'deny', words: ['0f3c2a1b', 'too', 'much'] }],
    ['/think', { kind: 'think' }],
    ['/think high', { kind: 'think', level: 'high' }],
    ['/thinking default', { kind: 'think', level: null }],
    [
      '/think max',
      {
        kind: 'think',
        problem: '/think: "max" is not a level; use one of off, minimal, low, medium, high, xhigh, or default',
      },
    ],
    ['/helpme', { kind: 'unknown', command: '/helpme' }],
    ['/newish', { kind: 'unknown', command: '/newish' }],
  ])('reads %j', (line, expected) => {
    expect(parseChatLine(line)).toEqual(expected);
  });
});
