import { withOutageWait, type WaitingContext } from '../../activities/parts/outage-wait';
import { holdInHeartbeat } from '../../activities/parts/held-details';

/** A connection refused, as pg reports it. */
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** An attempt's context: started now, `startToCloseMs` to run; its sleeps are counted and take a hundredth of their time. */
function context(startToCloseMs = 60_000, details?: unknown) {
  const beats: unknown[] = [];
  const slept: number[] = [];
  const lines: string[] = [];
  const ctx: WaitingContext = {
    info: {
      isLocal: false,
      heartbeatDetails: details,
      currentAttemptScheduledTimestampMs: Date.now(),
      startToCloseTimeoutMs: startToCloseMs,
      scheduledTimestampMs: Date.now(),
      scheduleToCloseTimeoutMs: 0,
    },
    log: { info: (m: string) => void lines.push(m) },
    heartbeat: (d?: unknown) => void beats.push(d),
    sleep: async (ms) => {
      slept.push(ms);
      await new Promise((r) => setTimeout(r, ms / 100));
    },
  };
  return { ctx, beats, slept, lines };
}

/** A database that answers after `downProbes` failed probes. */
function database(downProbes: number) {
  let probes = 0;
  return { answers: async () => ++probes > downProbes, probes: () => probes };
}

describe('withOutageWait', () => {
  it('runs the activity again, in the same attempt, once the database answers', async () => {
    const db = database(3);
    const { ctx, slept, lines } = context();
    let runs = 0;
    const { act } = withOutageWait(
      {
        act: async () => {
          if (++runs === 1) throw refused();
          return 'stored';
        },
      },
      { databaseAnswers: db.answers, probeIntervalMs: 500, maxWaitMs: 60_000 },
      () => ctx,
    );
    await expect(act()).resolves.toBe('stored');
    expect({ runs, probes: db.probes(), slept }).toEqual({ runs: 2, probes: 4, slept: [500, 500, 500] });
    expect(lines).toEqual(['database back; the activity runs again in the same attempt']);
  });

  it('heartbeats what the attempt holds while it waits, never empty details over a held output', async () => {
    const { ctx, beats } = context(60_000, 'from the last attempt');
    const { act } = withOutageWait(
      {
        act: async () => {
          if (beats.length === 0) {
            holdInHeartbeat(ctx, 'this attempt holds');
            throw refused();
          }
          return 'ok';
        },
      },
      { databaseAnswers: database(1).answers, probeIntervalMs: 500, maxWaitMs: 60_000 },
      () => ctx,
    );
    await act();
    expect(beats).toEqual(['this attempt holds', 'this attempt holds', 'this attempt holds']);
  });

  it("gives the error to Temporal's retry when the attempt's time would run out first", async () => {
    // A second of the attempt is left for reporting the failure: a tenth of a second to wait.
    const { ctx } = context(1_100);
    let runs = 0;
    const { act } = withOutageWait(
      {
        act: async () => {
          runs++;
          throw refused();
        },
      },
      { databaseAnswers: database(1_000).answers, probeIntervalMs: 2_000, maxWaitMs: 60_000 },
      () => ctx,
    );
    await expect(act()).rejects.toThrow('ECONNREFUSED');
    expect(runs).toBe(1);
  });

  it('rethrows any other error at once', async () => {
    const db = database(0);
    const { act } = withOutageWait(
      {
        act: async () => {
          throw Object.assign(new Error('duplicate key'), { code: '23505' });
        },
      },
      { databaseAnswers: db.answers, probeIntervalMs: 500, maxWaitMs: 60_000 },
      () => context().ctx,
    );
    await expect(act()).rejects.toThrow('duplicate key');
    expect(db.probes()).toBe(0);
  });
});
