import { holdReply, takeHeldReply } from '../../activities/held-reply';
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
      log: { warn: (m: string) => void warnings.push(m), info: () => undefined, debug: () => undefined, error: () => undefined, trace: () => undefined, log: () => undefined },
    },
  };
}

const usage = { input: 10, output: 5 };
const text = (t: string): ModelResponse => ({ content: [{ type: 'text', text: t }], stopReason: 'stop', usage, model: 'm' });
const toolCall: ModelResponse = { content: [{ type: 'toolCall', id: 'toolu_1', name: 'deploy', arguments: { token: 'secret' } }], stopReason: 'toolUse', usage, model: 'm' };

describe('holdReply and takeHeldReply', () => {
  it('hold a reply in the heartbeat details, and give it back to the next attempt of the same call only', () => {
    const first = context();
    expect(holdReply('e1', text('hello'), false, first.ctx as never)).toBe(true);
    expect(first.beats).toEqual([{ entryId: 'e1', reply: text('hello') }]);

    const retry = context(first.beats[0]);
    expect(takeHeldReply('e1', retry.ctx as never)).toEqual(text('hello'));
    // Recorded again at once, so an attempt that fails before storing it leaves it for the next.
    expect(retry.beats).toEqual([first.beats[0]]);
    expect(takeHeldReply('e2', context(first.beats[0]).ctx as never)).toBeUndefined();
    expect(takeHeldReply('e1', context(undefined).ctx as never)).toBeUndefined();
    expect(takeHeldReply('e1', context({ entryId: 'e1' }).ctx as never)).toBeUndefined();
  });

  it('hold tool calls only when payloads are encrypted: their raw arguments stay out of Temporal otherwise', () => {
    const plain = context();
    expect(holdReply('e1', toolCall, false, plain.ctx as never)).toBe(false);
    expect(plain.beats).toEqual([]);
    const sealed = context();
    expect(holdReply('e1', toolCall, true, sealed.ctx as never)).toBe(true);
    expect(sealed.beats).toHaveLength(1);
  });

  it('do not hold a reply too large for a heartbeat, and say so', () => {
    const big = context();
    expect(holdReply('e1', text('x'.repeat(300 * 1024)), true, big.ctx as never)).toBe(false);
    expect(big.beats).toEqual([]);
    expect(big.warnings).toEqual([expect.stringContaining('too large to hold')]);
  });
});
