import { ReceivedReplies } from '../../activities/parts/received-replies';
import type { ModelResponse } from '../../src/model/model-client';

const reply = (t: string): ModelResponse => ({
  content: [{ type: 'text', text: t }],
  stopReason: 'stop',
  usage: { input: 1, output: 1 },
  model: 'm',
});
/** JSON bytes of `reply(t)`, to size a memo in replies. */
const bytesOf = (t: string) => Buffer.byteLength(JSON.stringify(reply(t)));

describe('ReceivedReplies', () => {
  it('gives back the reply kept for a scope and part, with whether it was recorded', () => {
    const replies = new ReceivedReplies();
    replies.keep('flush-1', 'round 0', reply('a'));
    replies.keep('flush-1', 'round 1', reply('b'), true);
    expect(replies.get('flush-1', 'round 0')).toEqual({ reply: reply('a'), recorded: false });
    expect(replies.get('flush-1', 'round 1')).toEqual({ reply: reply('b'), recorded: true });
    expect(replies.get('flush-1', 'round 2')).toBeUndefined();
    expect(replies.get('flush-2', 'round 0')).toBeUndefined();
  });

  it('forgets a whole scope at once', () => {
    const replies = new ReceivedReplies();
    replies.keep('s', 'p1', reply('a'));
    replies.keep('s', 'p2', reply('b'));
    replies.keep('t', 'p1', reply('c'));
    replies.forget('s');
    expect(replies.get('s', 'p1')).toBeUndefined();
    expect(replies.get('s', 'p2')).toBeUndefined();
    expect(replies.get('t', 'p1')).toEqual({ reply: reply('c'), recorded: false });
  });

  it('evicts the oldest scope first when over its bytes, never the one just kept', () => {
    const replies = new ReceivedReplies(bytesOf('aaaa') * 2);
    replies.keep('old', 'p', reply('aaaa'));
    replies.keep('mid', 'p', reply('bbbb'));
    replies.keep('new', 'p', reply('cccc'));
    expect(replies.get('old', 'p')).toBeUndefined();
    expect(replies.get('mid', 'p')?.reply).toEqual(reply('bbbb'));
    expect(replies.get('new', 'p')?.reply).toEqual(reply('cccc'));
    // Keeping again under a part replaces it without counting it twice.
    replies.keep('new', 'p', reply('dddd'));
    expect(replies.get('mid', 'p')?.reply).toEqual(reply('bbbb'));
  });

  it('does not keep a reply larger than the whole memo', () => {
    const replies = new ReceivedReplies(10);
    replies.keep('s', 'p', reply('far too large for ten bytes'));
    expect(replies.get('s', 'p')).toBeUndefined();
  });
});
