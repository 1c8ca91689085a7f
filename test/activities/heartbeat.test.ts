import { startHeartbeat } from '../../activities/parts/heartbeat';

describe('startHeartbeat', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('beats on a timer until the first progress, then on progress at most once per interval', () => {
    let sent = 0;
    const heartbeat = startHeartbeat(1_000, () => sent++);
    // Waiting for the first byte: the timer beats.
    jest.advanceTimersByTime(2_500);
    expect(sent).toBe(2);
    // Progress 500 ms after the last beat: too soon, and the timer is off from now on.
    heartbeat.beat();
    expect(sent).toBe(2);
    jest.advanceTimersByTime(5_000);
    expect(sent).toBe(2);
    // Progress an interval or more after the last beat: one beat, then none for a burst of events.
    heartbeat.beat();
    heartbeat.beat();
    heartbeat.beat();
    expect(sent).toBe(3);
    jest.advanceTimersByTime(1_000);
    heartbeat.beat();
    expect(sent).toBe(4);
    heartbeat.stop();
  });

  it('sends nothing for a reply that streams within the first interval', () => {
    let sent = 0;
    const heartbeat = startHeartbeat(1_000, () => sent++);
    for (let i = 0; i < 6; i++) heartbeat.beat();
    heartbeat.stop();
    jest.advanceTimersByTime(10_000);
    expect(sent).toBe(0);
  });
});
