import { turnReplyHold } from '../../activities/parts/held-reply';
import { ReceivedReplies } from '../../activities/parts/received-replies';
import type { ModelResponse } from '../../src/model/model-client';

/** An activity context that records its heartbeats and starts from `details` (an earlier attempt's). */
function context(details?: unknown) {
  const beats: unknown[] = [];
  const warnings: string[] = [];
  return {
    beats,
    warnings,
    ctx: {
      info: { heartbeatDetails: details },
      heartbeat: (d?: unknown) => void beats.push(d),
      log: {
        warn: (m: string) => void warnings.push(m),
        info: () => undefined,
        debug: () => undefined,
        error: () => undefined,
        trace: () => undefined,
        log: () => undefined,
      },
    },
  };
}

/** A hold on a worker of its own (its own memo), as seen by one attempt with `ctx`. */
const attempt = (ctx: ReturnType<typeof context>['ctx'], encrypted: boolean, replies = new ReceivedReplies()) =>
  turnReplyHold(replies, encrypted, () => ctx as never);

const usage = { input: 10, output: 5 };
const text = (t: string): ModelResponse => ({
  content: [{ type: 'text', text: t }],
  stopReason: 'stop',
  usage,
  model: 'm',
});
const toolCall: ModelResponse = {
  content: [{ type: 'toolCall', id: 'toolu_1', name: 'deploy', arguments: { token: 'secret' } }],
  stopReason: 'toolUse',
  usage,
  model: 'm',
};

describe('turnReplyHold', () => {
  it('holds a reply in the heartbeat details, and gives it back to the next attempt of the same call only, on any worker', () => {
    const first = context();
    attempt(first.ctx, false).hold('e1', text('hello'));
    expect(first.beats).toEqual([{ entryId: 'e1', reply: text('hello') }]);

    const retry = context(first.beats[0]);
    expect(attempt(retry.ctx, false).take('e1')).toEqual(text('hello'));
    // Recorded again at once, so an attempt that fails before storing it leaves it for the next.
    expect(retry.beats).toEqual([first.beats[0]]);
    expect(attempt(context(first.beats[0]).ctx, false).take('e2')).toBeUndefined();
    expect(attempt(context(undefined).ctx, false).take('e1')).toBeUndefined();
    expect(attempt(context({ entryId: 'e1' }).ctx, false).take('e1')).toBeUndefined();
  });

  it('keeps tool calls out of unencrypted heartbeats, and gives them back from the worker memo', () => {
    const replies = new ReceivedReplies();
    const plain = context();
    attempt(plain.ctx, false, replies).hold('e1', toolCall);
    expect(plain.beats).toEqual([]);
    expect(attempt(context().ctx, false, replies).take('e1')).toEqual(toolCall);
    // Another worker has neither the memo nor a heartbeat: it calls the model again.
    expect(attempt(context().ctx, false).take('e1')).toBeUndefined();

    const sealed = context();
    attempt(sealed.ctx, true).hold('e1', toolCall);
    expect(sealed.beats).toHaveLength(1);
  });

  it('forgets the reply once released (stored)', () => {
    const replies = new ReceivedReplies();
    const hold = attempt(context().ctx, false, replies);
    hold.hold('e1', toolCall);
    hold.release('e1');
    expect(hold.take('e1')).toBeUndefined();
  });

  it('does not hold a reply too large for a heartbeat, says so, and keeps it in the memo', () => {
    const replies = new ReceivedReplies();
    const big = context();
    const reply = text('x'.repeat(300 * 1024));
    attempt(big.ctx, true, replies).hold('e1', reply);
    expect(big.beats).toEqual([]);
    expect(big.warnings).toEqual([expect.stringContaining('too large to hold')]);
    expect(attempt(context().ctx, true, replies).take('e1')).toEqual(reply);
  });
});
