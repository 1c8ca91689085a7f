import { RanToolOutputs, toolOutputHold, type HeldToolOutput } from '../../activities/parts/held-tool-output';

/** An activity context that records its heartbeats and starts from `details` (an earlier attempt's). */
function context(details?: unknown) {
  const beats: unknown[] = [];
  return { beats, ctx: { info: { heartbeatDetails: details }, heartbeat: (d?: unknown) => void beats.push(d) } };
}

const held = (resultEntryId: string, text: string): HeldToolOutput => ({
  resultEntryId,
  toolName: 'mark',
  output: { content: [{ type: 'text', text }] },
});

describe('toolOutputHold', () => {
  it('with encryption on, holds the output in the heartbeat details for a retry on any worker, that call only', () => {
    const first = context();
    toolOutputHold(new RanToolOutputs(), true, () => first.ctx).hold(held('r1', 'marked'));
    expect(first.beats).toEqual([held('r1', 'marked')]);

    const retry = context(first.beats[0]);
    expect(toolOutputHold(new RanToolOutputs(), true, () => retry.ctx).take('r1')).toEqual(held('r1', 'marked'));
    // Held again at once, so an attempt that fails before storing it leaves it for the next.
    expect(retry.beats).toEqual([first.beats[0]]);
    expect(toolOutputHold(new RanToolOutputs(), true, () => context(first.beats[0]).ctx).take('r2')).toBeUndefined();
    expect(
      toolOutputHold(new RanToolOutputs(), true, () => context({ resultEntryId: 'r1' }).ctx).take('r1'),
    ).toBeUndefined();
  });

  it('with encryption off, keeps the output out of Temporal and gives it back from the worker memo until released', () => {
    const memo = new RanToolOutputs();
    const first = context();
    toolOutputHold(memo, false, () => first.ctx).hold(held('r1', 'secret output'));
    expect(first.beats).toEqual([]);

    const hold = toolOutputHold(memo, false, () => context().ctx);
    expect(hold.take('r1')).toEqual(held('r1', 'secret output'));
    hold.release('r1');
    expect(hold.take('r1')).toBeUndefined();
  });
});

describe('RanToolOutputs', () => {
  it('evicts the oldest outputs past its byte bound and never keeps one larger than the whole memo', () => {
    const one = Buffer.byteLength(JSON.stringify(held('r1', 'x'.repeat(100))));
    const memo = new RanToolOutputs(one * 2);
    memo.keep(held('r1', 'x'.repeat(100)));
    memo.keep(held('r2', 'y'.repeat(100)));
    memo.keep(held('r3', 'z'.repeat(100)));
    expect([memo.get('r1'), memo.get('r2')?.resultEntryId, memo.get('r3')?.resultEntryId]).toEqual([
      undefined,
      'r2',
      'r3',
    ]);
    memo.keep(held('big', 'x'.repeat(one * 3)));
    expect(memo.get('big')).toBeUndefined();
    expect(memo.get('r3')).toBeDefined();
  });
});
