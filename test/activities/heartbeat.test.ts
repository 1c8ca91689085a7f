import { startHeartbeat, whileHeartbeating } from '../../activities/parts/heartbeat';
import { holdInHeartbeat } from '../../activities/parts/held-details';

describe('startHeartbeat', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('beats once per interval until stopped, whatever the work does meanwhile', () => {
    let sent = 0;
    const heartbeat = startHeartbeat(1_000, () => sent++);
    jest.advanceTimersByTime(2_500);
    expect(sent).toBe(2);
    // A long silence of the stream (a slow first token, a thinking block) still beats.
    jest.advanceTimersByTime(30_000);
    expect(sent).toBe(32);
    heartbeat.stop();
    jest.advanceTimersByTime(10_000);
    expect(sent).toBe(32);
  });

  it('sends nothing for work done within the first interval', () => {
    let sent = 0;
    const heartbeat = startHeartbeat(1_000, () => sent++);
    heartbeat.stop();
    jest.advanceTimersByTime(10_000);
    expect(sent).toBe(0);
  });
});

describe('whileHeartbeating', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('beats with the details the attempt holds, so a timer beat never clears a held reply', async () => {
    const beats: unknown[] = [];
    const ctx = { info: { heartbeatDetails: undefined }, heartbeat: (d?: unknown) => void beats.push(d) };
    const held = { entryId: 'e1', reply: { content: [] } };
    let finish!: () => void;
    const done = whileHeartbeating(async () => {
      holdInHeartbeat(ctx, held);
      await new Promise<void>((resolve) => (finish = resolve));
      return 'stored';
    }, ctx);
    jest.advanceTimersByTime(3_000);
    finish();
    await expect(done).resolves.toBe('stored');
    // The hold's own beat, then one a second, each with the held reply.
    expect(beats).toEqual([held, held, held, held]);
    jest.advanceTimersByTime(5_000);
    expect(beats).toHaveLength(4);
  });

  it('beats with the details the attempt started with while it holds nothing new', async () => {
    const beats: unknown[] = [];
    const earlier = { entryId: 'e0' };
    const ctx = { info: { heartbeatDetails: earlier }, heartbeat: (d?: unknown) => void beats.push(d) };
    let finish!: () => void;
    const done = whileHeartbeating(() => new Promise<void>((resolve) => (finish = resolve)), ctx);
    jest.advanceTimersByTime(2_000);
    finish();
    await done;
    expect(beats).toEqual([earlier, earlier]);
  });
});
