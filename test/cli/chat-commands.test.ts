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
    ['/helpme', { kind: 'unknown', command: '/helpme' }],
    ['/newish', { kind: 'unknown', command: '/newish' }],
  ])('reads %j', (line, expected) => {
    expect(parseChatLine(line)).toEqual(expected);
  });
});
